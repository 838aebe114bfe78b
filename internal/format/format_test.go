package format

import (
	"math"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

func TestSpikeReason(t *testing.T) {
	for _, c := range []struct {
		s    model.Spike
		want string
	}{
		{model.Spike{}, ""},
		{model.Spike{Baseline: 60_000, Window: 5 * time.Minute}, ""},
		{model.Spike{Active: true, Baseline: 60_000, Factor: 3, Window: 5 * time.Minute}, "3.0× the 5-min baseline 60,000 (median)"},
		// Past 10× a tenth is no news.
		{model.Spike{Active: true, Baseline: 60_000, Factor: 2295, Window: 5 * time.Minute}, "2,295× the 5-min baseline 60,000 (median)"},
		{model.Spike{Active: true, Window: 90 * time.Second}, "up from the 1m30s baseline 0 (median)"},
	} {
		if got := SpikeReason(c.s); got != c.want {
			t.Errorf("SpikeReason(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {999.4, "999"}, {1000, "1,000"}, {1234567.5, "1,234,568"}, {-1234, "-1,234"}, {100000, "100,000"},
		{math.NaN(), "-"}, {math.Inf(1), "-"},
	} {
		if got := Thousands(c.v); got != c.want {
			t.Errorf("Thousands(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// Whatever a counter did, the figure fits its column.
func TestAbbreviateFitsWidth(t *testing.T) {
	for _, c := range []struct {
		v     float64
		width int
		want  string
	}{
		{6639127543485.86, 11, "6.6T"},
		{6639127543485.86, 7, "6.6T"},
		{1234567, 7, "1.2M"},
		{999.99, 4, "1.0k"},
		{123456789, 5, "123M"},
		{1e15, 4, "1.0P"},
		{1.5e20, 7, "150.0E"},
		{1e22, 7, "10000E"},
		{1e22, 4, "####"},
		{math.NaN(), 5, "-"},
	} {
		got := Abbreviate(c.v, c.width)
		if got != c.want {
			t.Errorf("Abbreviate(%v, %d) = %q, want %q", c.v, c.width, got, c.want)
		}
		if len(got) > c.width {
			t.Errorf("Abbreviate(%v, %d) = %q is wider than its column", c.v, c.width, got)
		}
	}
}

func TestRateFitsWidth(t *testing.T) {
	for _, c := range []struct {
		in    float64
		width int
		want  string
	}{{12345, 8, "12,345"}, {123456789, 8, "123.5M"}, {1234567, 7, "1.2M"}, {999999, 7, "999,999"}, {1e15, 4, "1.0P"}, {6639127543485.86, 8, "6.6T"}, {1e22, 3, "###"}} {
		got := Rate(c.in, c.width)
		if got != c.want {
			t.Errorf("Rate(%v, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if len(got) > c.width {
			t.Errorf("Rate(%v, %d) = %q is wider than its column", c.in, c.width, got)
		}
	}
}

// An absurd percentage is abbreviated, never wider than its column.
func TestPercentInFitsWidth(t *testing.T) {
	for _, c := range []struct {
		in    float64
		width int
		want  string
	}{{42.25, 5, "42.2"}, {100, 5, "100"}, {6639127543485.86, 5, "6.6T"}} {
		if got := PercentIn(c.in, c.width); got != c.want || len(got) > c.width {
			t.Errorf("PercentIn(%v, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {20 << 20, "20.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// Two decimals while they fit, abbreviated past the column's width.
func TestDecimalInFitsWidth(t *testing.T) {
	for _, c := range []struct {
		v     float64
		width int
		want  string
	}{{12.345, 11, "12.35"}, {6639127543485.86, 11, "6.6T"}, {math.NaN(), 7, "-"}, {1234.5, 7, "1234.50"}} {
		if got := DecimalIn(c.v, c.width); got != c.want || len(got) > c.width {
			t.Errorf("DecimalIn(%v, %d) = %q, want %q", c.v, c.width, got, c.want)
		}
	}
}
