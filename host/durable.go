package host

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"github.com/livecheck/livecheck/sim"
)

// Durable fields on disk. After every handler that changed one, the node
// writes all of them to its state file, atomically (a temporary file,
// fsync, rename, fsync of the directory), before any message the
// handler sent leaves: a node killed at any point and started again
// finds them as the last handler left them, which is what the
// simulator's reset keeps. A restart builds the node with Spec.New,
// loads the fields into it, and runs Init.
//
// The file: the line "livecheck-durable 2", then gob's encoding of
// stateFile, each field's value in it in the codec's encoding (codec.go),
// then the CRC-32C of everything before it (4 bytes,
// big-endian). A file that does not read back whole is damaged, and the
// node refuses to start. A file of version 1 holds its values in the
// codec's encoding without identity (before a value that can alias kept
// its aliasing), and reads back as it was written.

const (
	durableMagic   = "livecheck-durable 2\n"
	durableMagicV1 = "livecheck-durable 1\n"
)

type stateFile struct {
	System string
	Node   int
	// Calls is how many of the driver's calls to the node it has made
	// (Spec.Calls): a restart does not make them again.
	Calls  int
	Fields []stateField
}

type stateField struct {
	Name string
	Zero bool // the field's zero value: no Data
	Data []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// stateFileName is node id's state file in dir.
func stateFileName(dir string, id sim.NodeID) string {
	return filepath.Join(dir, fmt.Sprintf("node-%d.state", id))
}

// encodeDurable returns the state file of node n.
func encodeDurable(system string, id sim.NodeID, calls int, n sim.Node) ([]byte, error) {
	f := stateFile{System: system, Node: int(id), Calls: calls}
	for _, d := range sim.DurableFields(n) {
		sf := stateField{Name: d.Name, Zero: d.Value.IsZero()}
		if !sf.Zero {
			if err := registerValue(d.Value); err != nil {
				return nil, fmt.Errorf("durable field %s: %v", d.Name, err)
			}
			var err error
			if sf.Data, err = encodeValue(nil, d.Value); err != nil {
				return nil, fmt.Errorf("durable field %s: %v", d.Name, err)
			}
		}
		f.Fields = append(f.Fields, sf)
	}
	var b bytes.Buffer
	b.WriteString(durableMagic)
	if err := gob.NewEncoder(&b).Encode(&f); err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint32(b.Bytes(), crc32.Checksum(b.Bytes(), castagnoli)), nil
}

// errDamaged says a state file does not read back whole.
var errDamaged = errors.New("damaged")

// decodeDurable loads a state file into n, a node as New built it, and
// returns the number of calls it records.
func decodeDurable(b []byte, system string, id sim.NodeID, n sim.Node) (calls int, err error) {
	body, ok := checkCRC(b)
	legacy := ok && bytes.HasPrefix(body, []byte(durableMagicV1))
	if !ok || !legacy && !bytes.HasPrefix(body, []byte(durableMagic)) {
		return 0, fmt.Errorf("%w (its checksum or header is wrong)", errDamaged)
	}
	var f stateFile
	if err := gob.NewDecoder(bytes.NewReader(body[len(durableMagic):])).Decode(&f); err != nil {
		return 0, fmt.Errorf("%w: %v", errDamaged, err)
	}
	if f.System != system || f.Node != int(id) {
		return 0, fmt.Errorf("it is node %d of system %s, not node %d of %s", f.Node, f.System, id, system)
	}
	byName := map[string]stateField{}
	for _, sf := range f.Fields {
		byName[sf.Name] = sf
	}
	for _, d := range sim.DurableFields(n) {
		sf, ok := byName[d.Name]
		if !ok {
			continue // a field added since: New's value
		}
		d.Value.Set(reflect.Zero(d.Value.Type()))
		if sf.Zero {
			continue
		}
		if err := decodeAs(sf.Data, d.Value, legacy); err != nil {
			return 0, fmt.Errorf("durable field %s does not read back: %v", d.Name, err)
		}
	}
	return f.Calls, nil
}

func checkCRC(b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	return body, crc32.Checksum(body, castagnoli) == binary.BigEndian.Uint32(sum)
}

// loadDurable loads node id's state file from dir into n, if there is
// one; ok says whether there was.
func loadDurable(dir, system string, id sim.NodeID, n sim.Node) (calls int, ok bool, err error) {
	name := stateFileName(dir, id)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	calls, err = decodeDurable(b, system, id, n)
	if err != nil {
		return 0, false, fmt.Errorf("node %d refuses to start: its state file %s is %v; move it away to start the node afresh, without what it kept", id, name, err)
	}
	return calls, true, nil
}

// writeAtomic replaces file name with b: a temporary file beside it,
// fsync, rename, fsync of the directory.
func writeAtomic(name string, b []byte) error {
	dir := filepath.Dir(name)
	tmp, err := os.CreateTemp(dir, filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}
