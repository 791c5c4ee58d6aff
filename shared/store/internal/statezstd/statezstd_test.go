package statezstd

import (
	"bytes"
	"fmt"
	"testing"
)

// sampleState is text shaped like a stored game: columns of moves and a
// change log.
func sampleState(plies int) []byte {
	var b bytes.Buffer
	b.WriteString("format 3\nid g-123\nvariant standard\n")
	for i := range plies {
		fmt.Fprintf(&b, "%c%d%c%d N%cx%c%d %d\n", 'a'+i%8, i%8+1, 'a'+(i*3)%8, (i*5)%8+1, 'a'+i%8, 'a'+(i*7)%8, i%8+1, 1200+i*37%900)
	}
	for v := range 32 {
		fmt.Fprintf(&b, `{"version":%d,"at":%d,"delta":{"clock":{"white":%d,"black":%d,"running":"white"},"deadline":%d,"move":{"ply":%d,"uci":"e2e4"}}}`+"\n", v, 1764600000000+v*1500, 300000-v*700, 300000-v*650, 1764600300000+v*1500, v+1)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, plies := range []int{0, 40, 300, 3000} {
		state := sampleState(plies)
		packed, ok := Compress(state)
		if ok != (len(state) > Above) {
			t.Errorf("%d plies (%d bytes): compressed %v", plies, len(state), ok)
		}
		if !ok {
			if !bytes.Equal(packed, state) {
				t.Errorf("%d plies: an uncompressed state was changed", plies)
			}
			continue
		}
		if len(packed) >= len(state) {
			t.Errorf("%d plies: %d bytes compressed to %d", plies, len(state), len(packed))
		}
		got, err := Decompress(packed)
		if err != nil || !bytes.Equal(got, state) {
			t.Fatalf("%d plies: Decompress = %d bytes, %v; want the %d bytes", plies, len(got), err, len(state))
		}
	}
	if _, err := Decompress([]byte("not zstd")); err == nil {
		t.Error("Decompress of garbage: no error")
	}
}

// BenchmarkCompress and BenchmarkDecompress: a state of 40 and 300 plies.
//
//	go test -run '^$' -bench . -benchtime 2000x ./shared/store/internal/statezstd
func BenchmarkCompress(b *testing.B) {
	for _, plies := range []int{40, 300} {
		state := sampleState(plies)
		b.Run(fmt.Sprintf("plies%d", plies), func(b *testing.B) {
			b.SetBytes(int64(len(state)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				packed, _ := Compress(state)
				n = len(packed)
			}
			b.ReportMetric(float64(n), "packed-bytes")
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	for _, plies := range []int{40, 300} {
		packed, _ := Compress(sampleState(plies))
		b.Run(fmt.Sprintf("plies%d", plies), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decompress(packed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
