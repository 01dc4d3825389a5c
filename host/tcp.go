package host

import (
	"errors"
	"net"
)

type streamListener = *net.TCPListener

func startTCP(n *Node) (transport, error) {
	return nil, errors.New("the stream transport is not written yet")
}
