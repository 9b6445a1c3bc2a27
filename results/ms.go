package results

// AppendMS appends FormatMS(v) to dst without an intermediate string, for
// writers of millions of values (analyze's events file).
func AppendMS(dst []byte, v float64) []byte { return appendDecimal(dst, v) }
