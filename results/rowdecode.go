package results

import "github.com/ptuprobe/ptuprobe/internal/rowdecode"

// The fast path of reading (readBlock, lineDecoder) is installed in
// internal/rowdecode for analyze, not exported: results' public reading
// is NewReader and Read.
func init() {
	rowdecode.Install(rowdecode.Source{
		ReadBlock: func(rd any, buf []byte) (rowdecode.Block, error) {
			return rd.(*Reader).readBlock(buf)
		},
		NewDecoder: func(rd any, readable bool, keep []string) (any, error) {
			decoder := rd.(*Reader).decoder
			if readable {
				decoder = rd.(*Reader).readableDecoder
			}
			d, err := decoder(keep...)
			if err != nil {
				return nil, err
			}
			return d, nil
		},
	})
}

var _ rowdecode.Decoder[Record] = (*lineDecoder)(nil)
