package etcdraft

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Msg is a raft message on the simulated wire: the fields of a
// raftpb.Message as plain values, so that the checker copies, hashes and
// dumps it as any message (a raftpb.Message holds protobuf internals and
// pointers). It is what a transport does anyway, in a form that stays
// readable in a trace. To and From are raft ids (1 to n).
//
// The conversion keeps every field raft sets on a message between nodes;
// the only field it carries as protobuf bytes is the snapshot, which raft
// sends only to a follower behind a compacted log (this system never
// compacts, so in practice never).
type Msg struct {
	Type       pb.MessageType
	To, From   uint64
	Term       uint64
	LogTerm    uint64
	Index      uint64
	Entries    []Entry
	Commit     uint64
	Vote       uint64
	Reject     bool
	RejectHint uint64
	Context    []byte
	Snapshot   []byte // the snapshot marshaled (nil: none)
}

// MessageKind is the raft message's type (MsgApp, MsgVote, ...): coverage
// counts deliveries per kind.
func (m Msg) MessageKind() string { return m.Type.String() }

// Entry is a log entry as plain values: on the wire (Msg.Entries) and in
// a node's applied list. Data is the proposal's id, 0 for the entry a new
// leader appends with no data.
type Entry struct {
	Index, Term uint64
	Type        pb.EntryType
	ID          int
}

func (e Entry) String() string {
	s := "noop"
	if e.ID != 0 {
		s = "p" + strconv.Itoa(e.ID)
	}
	if e.Type != pb.EntryNormal {
		s = e.Type.String()
	}
	return fmt.Sprintf("%s@%d/t%d", s, e.Index, e.Term)
}

// ProposalData is what a node proposes for proposal id: its id in text,
// which EntryOf reads back.
func ProposalData(id int) []byte { return []byte("p" + strconv.Itoa(id)) }

// EntryOf is e as plain values. An entry whose data is not a proposal
// this system made would be a bug in the adapter: it panics, which the
// checker reports.
func EntryOf(e *pb.Entry) Entry {
	out := Entry{Index: e.GetIndex(), Term: e.GetTerm(), Type: e.GetType()}
	if d := e.GetData(); len(d) > 0 {
		id, err := strconv.Atoi(strings.TrimPrefix(string(d), "p"))
		if err != nil || d[0] != 'p' {
			panic(fmt.Sprintf("entry %d has data %q, which no proposal of this system has", e.GetIndex(), d))
		}
		out.ID = id
	}
	return out
}

// pbEntry is e as raft's entry.
func (e Entry) pbEntry() *pb.Entry {
	out := &pb.Entry{Index: new(e.Index), Term: new(e.Term)}
	if e.Type != pb.EntryNormal {
		out.Type = e.Type.Enum() // as raft writes a proposal: a normal entry leaves Type unset
	}
	if e.ID != 0 {
		out.Data = ProposalData(e.ID)
	}
	return out
}

// WireOf is m as it travels.
func WireOf(m *pb.Message) Msg {
	out := Msg{
		Type: m.GetType(), To: m.GetTo(), From: m.GetFrom(), Term: m.GetTerm(),
		LogTerm: m.GetLogTerm(), Index: m.GetIndex(), Commit: m.GetCommit(),
		Vote: m.GetVote(), Reject: m.GetReject(), RejectHint: m.GetRejectHint(),
		Context: m.GetContext(),
	}
	for _, e := range m.GetEntries() {
		out.Entries = append(out.Entries, EntryOf(e))
	}
	if s := m.GetSnapshot(); s != nil {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
		if err != nil {
			panic(fmt.Sprintf("marshal a snapshot: %v", err))
		}
		out.Snapshot = b
	}
	return out
}

// Message is m as raft takes it, a fresh value each time (raft may keep
// what it is handed).
func (m Msg) Message() *pb.Message {
	out := &pb.Message{
		Type: m.Type.Enum(), To: new(m.To), From: new(m.From), Term: new(m.Term),
		LogTerm: new(m.LogTerm), Index: new(m.Index), Commit: new(m.Commit),
		Vote: new(m.Vote), Reject: new(m.Reject), RejectHint: new(m.RejectHint),
	}
	if len(m.Context) > 0 {
		out.Context = append([]byte(nil), m.Context...)
	}
	for _, e := range m.Entries {
		out.Entries = append(out.Entries, e.pbEntry())
	}
	if m.Snapshot != nil {
		out.Snapshot = &pb.Snapshot{}
		if err := proto.Unmarshal(m.Snapshot, out.Snapshot); err != nil {
			panic(fmt.Sprintf("unmarshal a snapshot: %v", err))
		}
	}
	return out
}

// DumpState shows the message as raft's own tests print one: type, term,
// and the fields that type uses. Not its raft ids: a report shows the
// message between livecheck's node ids ("MsgVote t1 0->1"), which are raft's
// less one.
func (m Msg) DumpState() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s t%d", m.Type, m.Term)
	if m.LogTerm != 0 || m.Index != 0 {
		fmt.Fprintf(&b, " log=%d/%d", m.LogTerm, m.Index)
	}
	if m.Commit != 0 {
		fmt.Fprintf(&b, " commit=%d", m.Commit)
	}
	if len(m.Entries) > 0 {
		fmt.Fprintf(&b, " entries=%v", m.Entries)
	}
	if m.Reject {
		fmt.Fprintf(&b, " rejected hint=%d", m.RejectHint)
	}
	if m.Snapshot != nil {
		b.WriteString(" snapshot")
	}
	return b.String()
}
