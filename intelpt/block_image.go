package intelpt

// SetImage makes im the memory the decoder reads code from, from the next
// block on: a caller that follows the sideband's context switches (a
// per-CPU trace of several processes) gives each process's image when
// it starts to run. Call it between Next and Event calls, not while a
// block is being decoded; the decode caches live in the images'
// sections, so each image keeps its own.
func (d *BlockDecoder) SetImage(im *Image) {
	if im == nil {
		im = NewImage()
	}
	if im == d.image {
		return
	}
	d.image, d.cfg.Image = im, im
	d.sec = nil
}
