package sim

// NumKinds is the number of event kinds: a Kind is always below it, so
// tables indexed by Kind can be arrays.
const NumKinds = int(numKinds)
