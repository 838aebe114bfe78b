// Package record writes and reads ctxtop recordings: the sampler's raw
// Samples, delta-encoded and compressed, so a replay runs them through the
// same model code the live monitor used. docs/recording-format.md is the
// format's specification; this file holds its constants and header.
package record

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
)

// FormatVersion is the format this package writes and the newest it reads.
// A reader refuses a file with a higher version: new versions are for
// changes an old reader would misread. Additions that an old reader can
// skip (new fields) keep the version.
const FormatVersion = 4

// magic opens every recording.
const magic = "CTXTOPREC"

// chunkSync opens every chunk, so a reader can find the next chunk after a
// damaged one.
var chunkSync = [4]byte{0xC7, 'c', 'k', 0x01}

const (
	// chunkHeaderSize is sync, compressed length, raw length, frame count
	// and CRC-32C.
	chunkHeaderSize = 4 + 4 + 4 + 4 + 4
	// maxChunkCompressed and maxChunkRaw bound what a reader allocates for
	// one chunk; the writer stays far below them.
	maxChunkCompressed = 16 << 20
	maxChunkRaw        = 16 << 20
	// maxHeader bounds the header's length.
	maxHeader = 64 << 10
	// MaxTasks bounds the tasks a decoded sample may hold: Linux's pid_max
	// is at most 2^22, so a file claiming more is damaged.
	MaxTasks = 1 << 22
	// maxCPUs bounds the per-CPU arrays.
	maxCPUs = 1 << 14
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sentinel errors, wrapped with where they were found.
var (
	// ErrNotRecording: the file does not start with the magic.
	ErrNotRecording = errors.New("not a ctxtop recording")
	// ErrNewerFormat: written by a newer ctxtop than this one.
	ErrNewerFormat = errors.New("recording format is newer than this ctxtop reads")
	// ErrCorrupt: a field or frame that cannot be what a writer wrote.
	ErrCorrupt = errors.New("corrupt recording")
	// ErrEmpty: a valid header but no samples to show.
	ErrEmpty = errors.New("recording holds no samples")
)

// Header describes the recording; it is written once at the start.
type Header struct {
	// Version is the format version the file was written with.
	Version int
	// Facts are the host facts batch JSON and the monitor's header show,
	// kept so a replay shows the recording's host: its name, kernel, CPU
	// model, logical CPUs, memory and boot time.
	Facts hostinfo.Facts
	// CPUs is the online CPU count when recording started.
	CPUs int
	// CtxtopVersion is the writer's version string.
	CtxtopVersion string
	// Interval is the requested sampling interval.
	Interval time.Duration
	// ProcRoot is the procfs root that was read.
	ProcRoot string
	// PIDs is the --pid filter, empty for the whole host.
	PIDs []int
	// HotThreshold is the switches/s at which a thread was hot.
	HotThreshold float64
	// Start is when the recorder started, with its time zone.
	Start time.Time
	// ZoneName and ZoneOffset are the recorder's local zone at Start, so a
	// replay elsewhere shows the clock the incident happened on.
	ZoneName   string
	ZoneOffset int
	// Part numbers the files of one rotated recording, from 0.
	Part int
}

// Header field numbers.
const (
	hHost          = 1
	hKernel        = 2
	hCPUs          = 3
	hCtxtopVersion = 4
	hInterval      = 5
	hProcRoot      = 6
	hPIDs          = 7
	hHot           = 8
	hStart         = 9
	hZoneName      = 10
	hZoneOffset    = 11
	hPart          = 12
	hCPUModel      = 13
	hLogicalCPUs   = 14
	hMemTotal      = 15
	hBootTime      = 16
)

func (h *Header) marshal() []byte {
	var b []byte
	str := func(n protowire.Number, s string) {
		b = protowire.AppendTag(b, n, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	vint := func(n protowire.Number, v int64) {
		b = protowire.AppendTag(b, n, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeZigZag(v))
	}
	str(hHost, h.Facts.Hostname)
	str(hKernel, h.Facts.Kernel)
	vint(hCPUs, int64(h.CPUs))
	str(hCtxtopVersion, h.CtxtopVersion)
	vint(hInterval, int64(h.Interval))
	str(hProcRoot, h.ProcRoot)
	for _, p := range h.PIDs {
		vint(hPIDs, int64(p))
	}
	b = protowire.AppendTag(b, hHot, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(h.HotThreshold))
	vint(hStart, h.Start.UnixNano())
	str(hZoneName, h.ZoneName)
	vint(hZoneOffset, int64(h.ZoneOffset))
	vint(hPart, int64(h.Part))
	str(hCPUModel, h.Facts.CPUModel)
	vint(hLogicalCPUs, int64(h.Facts.CPUs))
	vint(hMemTotal, int64(h.Facts.MemTotal))
	if !h.Facts.BootTime.IsZero() {
		vint(hBootTime, h.Facts.BootTime.UnixNano())
	}
	return b
}

func (h *Header) unmarshal(b []byte) error {
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return fmt.Errorf("header: %w", err)
		}
		b = b[n:]
		num, typ, v, z, s := f.num, f.typ, f.v, f.z(), string(f.b)
		switch {
		case num == hHost && typ == protowire.BytesType:
			h.Facts.Hostname = s
		case num == hKernel && typ == protowire.BytesType:
			h.Facts.Kernel = s
		case num == hCPUs && typ == protowire.VarintType:
			h.CPUs = clampInt(z)
		case num == hCtxtopVersion && typ == protowire.BytesType:
			h.CtxtopVersion = s
		case num == hInterval && typ == protowire.VarintType:
			h.Interval = time.Duration(z)
		case num == hProcRoot && typ == protowire.BytesType:
			h.ProcRoot = s
		case num == hPIDs && typ == protowire.VarintType:
			if len(h.PIDs) < 1024 {
				h.PIDs = append(h.PIDs, clampInt(z))
			}
		case num == hHot && typ == protowire.Fixed64Type:
			h.HotThreshold = math.Float64frombits(v)
		case num == hStart && typ == protowire.VarintType:
			h.Start = time.Unix(0, z)
		case num == hZoneName && typ == protowire.BytesType:
			h.ZoneName = s
		case num == hZoneOffset && typ == protowire.VarintType:
			h.ZoneOffset = clampInt(z)
		case num == hPart && typ == protowire.VarintType:
			h.Part = clampInt(z)
		case num == hCPUModel && typ == protowire.BytesType:
			h.Facts.CPUModel = s
		case num == hLogicalCPUs && typ == protowire.VarintType:
			h.Facts.CPUs = clampInt(z)
		case num == hMemTotal && typ == protowire.VarintType:
			h.Facts.MemTotal = uint64(z)
		case num == hBootTime && typ == protowire.VarintType:
			h.Facts.BootTime = time.Unix(0, z)
		}
		// Any other field is from a newer writer: skipped.
	}
	return nil
}

// Location is the recorder's zone: the replaying host's own zone when it
// agrees at the start of the recording, else a fixed offset.
func (h *Header) Location() *time.Location {
	name, off := h.Start.In(time.Local).Zone()
	if name == h.ZoneName && off == h.ZoneOffset {
		return time.Local
	}
	return time.FixedZone(h.ZoneName, h.ZoneOffset)
}

func clampInt(v int64) int {
	const lim = 1 << 31
	return int(max(min(v, lim), -lim))
}
