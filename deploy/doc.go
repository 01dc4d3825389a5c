// Package deploy holds what runs livecheck on a batch engine: a
// container image built FROM scratch around the static binary
// (Dockerfile), a Kubernetes Indexed Job that runs the shards of a split
// check and a second Job that merges them (k8s/), and a script for GNU
// parallel on one machine (parallel.sh). It is a module of its own, so
// that the Kubernetes and registry libraries its tests use stay out of
// livecheck's. The tests validate the manifests against the Kubernetes
// API types and build the image's OCI layout with no daemon.
package deploy
