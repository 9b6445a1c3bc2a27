package rowdecode

import (
	"errors"
	"strings"
)

// SplitCSVLine splits one RFC 4180 line (no embedded newlines) into
// fields, appending to dst. It rejects stray quotes. Unquoted fields are
// slices of one string made from the line, so a row costs one allocation
// rather than one per field.
func SplitCSVLine(dst []string, line []byte) ([]string, error) {
	s := string(line)
	i := 0
	for {
		if i < len(s) && s[i] == '"' {
			var b strings.Builder
			i++
			for {
				q := strings.IndexByte(s[i:], '"')
				if q < 0 {
					return dst, errors.New("unterminated quoted field")
				}
				b.WriteString(s[i : i+q])
				i += q + 1
				if i < len(s) && s[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			dst = append(dst, b.String())
			if i == len(s) {
				return dst, nil
			}
			if s[i] != ',' {
				return dst, errors.New("text after a closing quote")
			}
			i++
			continue
		}
		c := strings.IndexByte(s[i:], ',')
		end := len(s)
		if c >= 0 {
			end = i + c
		}
		f := s[i:end]
		if strings.IndexByte(f, '"') >= 0 {
			return dst, errors.New("stray quote in unquoted field")
		}
		dst = append(dst, f)
		if c < 0 {
			return dst, nil
		}
		i = end + 1
	}
}
