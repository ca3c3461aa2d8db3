package intelpt

// blockEntry caches, per instruction start, how far straight-line decoding
// goes (filled by the block decoder).
type blockEntry struct{}
