package host

import (
	"testing"
	"time"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/sim"
)

// echoer keeps window messages in flight between two nodes: node 0
// starts them, and each node answers every message it gets. With
// durable set, every handler changes a durable field, so every message
// waits for a state file write.
type echoer struct {
	sim.BaseNode
	Got     int
	Seq     int `livecheck:"durable"`
	durable bool
}

const window = 32

func (e *echoer) Init(ctx sim.Context) {
	if ctx.Self() == 0 {
		for i := 0; i < window; i++ {
			ctx.Send(1, Ping{N: i})
		}
	}
}

func (e *echoer) Receive(ctx sim.Context, from sim.NodeID, msg sim.Message) {
	e.Got++
	if e.durable {
		e.Seq++
	}
	ctx.Send(from, msg)
}

func echoSystem(t sim.Transport, durable bool) *protocol.System {
	return &protocol.System{Name: "echo", MinNodes: 2, MaxNodes: 2, Build: func(protocol.Config) (*protocol.Model, error) {
		return &protocol.Model{Spec: sim.Spec{Transport: t, New: func(sim.NodeID) sim.Node { return &echoer{durable: durable} }}}, nil
	}}
}

// BenchmarkMessages measures messages handled per second per node on
// loopback: two nodes answering each other with 32 messages in flight,
// over UDP and TCP, with and without a state file write per message,
// and with the cluster key (a MAC on every frame).
func BenchmarkMessages(b *testing.B) {
	for _, tc := range []struct {
		name    string
		t       sim.Transport
		durable bool
		key     bool
	}{{"udp", sim.Datagram, false, false}, {"tcp", sim.Stream, false, false}, {"udp-durable", sim.Datagram, true, false},
		{"udp-key", sim.Datagram, false, true}, {"tcp-key", sim.Stream, false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			co := ClusterOptions{}
			if tc.key {
				co.Key = []byte("0123456789abcdef0123456789abcdef")
			}
			if tc.durable {
				co.Data = b.TempDir()
			}
			c, err := StartCluster(echoSystem(tc.t, tc.durable), protocol.Config{Nodes: 2}, co)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Stop()
			handled := func() int64 { return c.Nodes[0].Stats().Received + c.Nodes[1].Stats().Received }
			b.ResetTimer()
			start, from := time.Now(), handled()
			for handled()-from < int64(b.N) {
				if time.Since(start) > time.Minute {
					b.Fatalf("%d of %d messages in a minute: messages were lost", handled()-from, b.N)
				}
				time.Sleep(time.Millisecond)
			}
			el := time.Since(start)
			b.ReportMetric(float64(handled()-from)/el.Seconds()/2, "msgs/s/node")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkDurableWrite measures one write of a node's state file: the
// encoding of its durable fields, a temporary file, fsync, rename and
// fsync of the directory.
func BenchmarkDurableWrite(b *testing.B) {
	dir := b.TempDir()
	e := &echoer{}
	name := stateFileName(dir, 0)
	for i := 0; b.Loop(); i++ {
		e.Seq = i
		fields, _, err := durableFields(e, 0)
		if err != nil {
			b.Fatal(err)
		}
		buf, err := encodeState(&stateFile{System: "echo", Gen: uint64(i + 1), Fields: fields})
		if err != nil {
			b.Fatal(err)
		}
		if err := writeAtomic(name, buf, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrame measures encoding and decoding one message.
func BenchmarkFrame(b *testing.B) {
	var buf bytesBuffer
	for b.Loop() {
		buf.Reset()
		if err := encodeFrame(&buf.Buffer, frame{from: 1, msg: Ping{N: 7}}); err != nil {
			b.Fatal(err)
		}
		if _, err := decodeFrame(buf.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/frame")
}
