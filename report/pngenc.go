package report

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"sync"
)

// Encoding a chart as PNG, quickly. image/png tries five filters on every
// row and keeps the best, then deflates at the default level: two thirds
// of the time of a report's PNG chart went there. A chart is flat colour
// and lines, and the "Up" filter alone (each byte less the one above it)
// turns its many repeated rows into zeros: with deflate at its best speed
// the file is a little larger (about 15%) and is written in a quarter of
// the time. The pixels are the same: PNG is lossless, whatever the
// filter (TestEncodePNGIsLossless).

// encodePNG writes img as a PNG. An opaque *image.RGBA (a chart: its
// ground is white) is written as image/png writes it, 8-bit RGB; any
// other image by image/png at its best speed.
func encodePNG(w io.Writer, img image.Image) error {
	rgba, ok := img.(*image.RGBA)
	if !ok || !isOpaque(rgba) {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	}
	b := rgba.Bounds()
	width, height := b.Dx(), b.Dy()
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.WriteString("\x89PNG\r\n\x1a\n"); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, 2 // bit depth 8, colour type RGB; compression, filter and interlace 0
	if err := writeChunk(bw, "IHDR", ihdr[:]); err != nil {
		return err
	}
	idat := &chunkWriter{w: bw, kind: "IDAT"}
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(idat)
	filtered := make([]byte, 1+3*width)
	filtered[0] = 2  // Up
	var above []byte // the row above, RGBA; none above the first (Up then subtracts 0)
	for y := range height {
		row := rgba.Pix[y*rgba.Stride : y*rgba.Stride+4*width]
		f := filtered[1:]
		if above == nil {
			upFilter(f, row, make([]byte, len(row)))
		} else {
			// Zeros where the row is as the one above: the whole row in
			// most of a chart's margins and plain ground, and on either
			// side of what changes from one row to the next (a curve,
			// a marker, a letter) in most others.
			lo, hi := samePrefix(row, above)/4, width-sameSuffix(row, above)/4
			if lo >= hi {
				clear(f)
			} else {
				clear(f[:3*lo])
				upFilter(f[3*lo:3*hi], row[4*lo:4*hi], above[4*lo:4*hi])
				clear(f[3*hi:])
			}
		}
		if _, err := zw.Write(filtered); err != nil {
			return err
		}
		above = row
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := idat.flush(); err != nil {
		return err
	}
	if err := writeChunk(bw, "IEND", nil); err != nil {
		return err
	}
	return bw.Flush()
}

// upFilter writes into dst (3 bytes a pixel) the RGB of row less that of
// above, byte by byte, both RGBA rows of one width.
func upFilter(dst, row, above []byte) {
	for len(row) >= 4 && len(above) >= 4 && len(dst) >= 3 {
		dst[0], dst[1], dst[2] = row[0]-above[0], row[1]-above[1], row[2]-above[2]
		dst, row, above = dst[3:], row[4:], above[4:]
	}
}

// samePrefix is how many bytes a and b (of one length) have the same
// from their start; sameSuffix from their end.
func samePrefix(a, b []byte) int {
	n := 0
	for len(a)-n >= 8 && binary.LittleEndian.Uint64(a[n:]) == binary.LittleEndian.Uint64(b[n:]) {
		n += 8
	}
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n
}

func sameSuffix(a, b []byte) int {
	n := 0
	for len(a)-n >= 8 && binary.LittleEndian.Uint64(a[len(a)-n-8:]) == binary.LittleEndian.Uint64(b[len(b)-n-8:]) {
		n += 8
	}
	for n < len(a) && a[len(a)-n-1] == b[len(b)-n-1] {
		n++
	}
	return n
}

// zlibWriters keeps deflate's state (some 1 MB, zeroed at each
// zlib.NewWriterLevel) for the next chart: a report draws a dozen.
var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed) // a valid level: no error
	return zw
}}

// isOpaque reports whether every pixel of img is opaque.
func isOpaque(img *image.RGBA) bool {
	b := img.Bounds()
	for y := range b.Dy() {
		row := img.Pix[y*img.Stride : y*img.Stride+4*b.Dx()]
		// Two pixels at a time: their alpha bytes all ones.
		const alphas = 0xff000000_ff000000
		for len(row) >= 8 {
			if binary.LittleEndian.Uint64(row)&alphas != alphas {
				return false
			}
			row = row[8:]
		}
		if len(row) == 4 && row[3] != 0xff {
			return false
		}
	}
	return true
}

// writeChunk writes one PNG chunk: its length, type, data and CRC.
func writeChunk(w io.Writer, kind string, data []byte) error {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
	copy(head[4:], kind)
	crc := crc32.NewIEEE()
	crc.Write(head[4:])
	crc.Write(data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc.Sum32())
	for _, p := range [][]byte{head[:], data, tail[:]} {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// chunkWriter cuts what is written to it into chunks of one kind, of up
// to 64 KiB each.
type chunkWriter struct {
	w    io.Writer
	kind string
	buf  []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.buf == nil {
			c.buf = make([]byte, 0, 64<<10)
		}
		k := min(len(p), cap(c.buf)-len(c.buf))
		c.buf, p = append(c.buf, p[:k]...), p[k:]
		if len(c.buf) == cap(c.buf) {
			if err := c.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	err := writeChunk(c.w, c.kind, c.buf)
	c.buf = c.buf[:0]
	return err
}
