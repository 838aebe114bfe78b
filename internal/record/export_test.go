package record

import "github.com/ctxtop/ctxtop/internal/model"

// What the replay tests (package record_test, beside the player's import
// of record) take from the codec's own tests.
var (
	Record          = record
	TestHeader      = testHeader
	Stacked         = stacked
	Traced          = traced
	SampleCmp       = sampleCmp
	ChunkOffsets    = chunkOffsets
	ChunkHeaderSize = chunkHeaderSize
	Magic           = magic
	ChunkSync       = chunkSync
	MustRead        = mustRead
	OlderFiles      = olderFiles
)

// OlderFile is one of OlderFiles: its path and the samples it holds.
func OlderFile(i int) (path string, samples []model.Sample) {
	return olderFiles[i].file, olderFiles[i].samples()
}
