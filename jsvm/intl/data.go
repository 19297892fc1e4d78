package intl

import (
	"bytes"
	"compress/flate"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// The locale data archive written by build.mjs (see pack() there for the
// layout): every FormatJS polyfill's CLDR data for every locale, cut into
// pieces stored once and compressed in blocks of about 64 KiB.
//
//go:embed dist/locale-data.bin
var archive []byte

const archiveMagic = "GORENDER-INTL-1\n"

type archiveIndex struct {
	Pieces  [][3]int                     `json:"pieces"`  // block, offset, length
	Blocks  [][2]int                     `json:"blocks"`  // offset (after the index), length
	Entries map[string]map[string]string `json:"entries"` // kind -> file -> template
}

type dataArchive struct {
	index archiveIndex
	body  []byte // the compressed blocks
}

var loadArchive = sync.OnceValues(func() (*dataArchive, error) {
	return parseArchive(archive)
})

func parseArchive(b []byte) (*dataArchive, error) {
	if !bytes.HasPrefix(b, []byte(archiveMagic)) || len(b) < len(archiveMagic)+4 {
		return nil, errors.New("intl: locale data archive: bad header")
	}
	b = b[len(archiveMagic):]
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n > len(b) {
		return nil, errors.New("intl: locale data archive: truncated index")
	}
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(b[:n])))
	if err != nil {
		return nil, fmt.Errorf("intl: locale data archive index: %w", err)
	}
	a := &dataArchive{body: b[n:]}
	if err := json.Unmarshal(raw, &a.index); err != nil {
		return nil, fmt.Errorf("intl: locale data archive index: %w", err)
	}
	for _, blk := range a.index.Blocks {
		if blk[0] < 0 || blk[1] < 0 || blk[0]+blk[1] > len(a.body) {
			return nil, errors.New("intl: locale data archive: block out of range")
		}
	}
	return a, nil
}

// block decompresses one block.
func (a *dataArchive) block(i int) ([]byte, error) {
	if i < 0 || i >= len(a.index.Blocks) {
		return nil, fmt.Errorf("intl: locale data archive: no block %d", i)
	}
	blk := a.index.Blocks[i]
	out, err := io.ReadAll(flate.NewReader(bytes.NewReader(a.body[blk[0] : blk[0]+blk[1]])))
	if err != nil {
		return nil, fmt.Errorf("intl: locale data archive block %d: %w", i, err)
	}
	return out, nil
}

// entry assembles the JSON text of one locale file's data from its template.
func (a *dataArchive) entry(kind, file string) (string, error) {
	tmpl, ok := a.index.Entries[kind][file]
	if !ok {
		return "", fmt.Errorf("intl: no %s data for locale %q", kind, file)
	}
	blocks := map[int][]byte{}
	var out strings.Builder
	for {
		i := strings.IndexByte(tmpl, '\x01')
		if i < 0 {
			out.WriteString(tmpl)
			return out.String(), nil
		}
		out.WriteString(tmpl[:i])
		tmpl = tmpl[i+1:]
		j := strings.IndexByte(tmpl, '\x02')
		if j < 0 {
			return "", fmt.Errorf("intl: %s data for %q: bad template", kind, file)
		}
		id, err := strconv.Atoi(tmpl[:j])
		if err != nil || id < 0 || id >= len(a.index.Pieces) {
			return "", fmt.Errorf("intl: %s data for %q: bad piece %q", kind, file, tmpl[:j])
		}
		tmpl = tmpl[j+1:]
		p := a.index.Pieces[id]
		blk, ok := blocks[p[0]]
		if !ok {
			if blk, err = a.block(p[0]); err != nil {
				return "", err
			}
			blocks[p[0]] = blk
		}
		if p[1] < 0 || p[2] < 0 || p[1]+p[2] > len(blk) {
			return "", fmt.Errorf("intl: %s data for %q: piece %d out of range", kind, file, id)
		}
		out.Write(blk[p[1] : p[1]+p[2]])
	}
}
