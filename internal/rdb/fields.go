package rdb

// wantsFieldValue reports whether the value of a field named name is
// needed (watched or collected).
func (d *Decoder) wantsFieldValue(name []byte) bool {
	if d.collecting() {
		return true
	}
	if !d.watch {
		return false
	}
	for _, w := range d.opts.WatchFields {
		if w == string(name) {
			return true
		}
	}
	return false
}

func (d *Decoder) needFieldNames() bool {
	return d.needNames || d.collecting()
}

// hashField records a field name (sample) and, when given, its value
// (watch list).
func (d *Decoder) hashField(name, value []byte, haveValue bool) {
	if d.fieldSample > 0 {
		d.sampleField(name)
	}
	if haveValue && d.watch {
		d.watchValue(name, value)
	}
}

// sampleField adds name to Record.Fields (cut to maxFieldName) or sets
// MoreFields when the sample is full.
func (d *Decoder) sampleField(name []byte) {
	rec := &d.rec
	if len(rec.Fields) >= d.fieldSample {
		rec.MoreFields = true
		return
	}
	if len(name) > maxFieldName {
		name = name[:maxFieldName]
	}
	// Fields point into fieldBuf; rebuild the slices when it moves.
	old := cap(d.fieldBuf)
	startAt := len(d.fieldBuf)
	d.fieldBuf = append(d.fieldBuf, name...)
	if cap(d.fieldBuf) != old {
		p := 0
		for i := range rec.Fields {
			l := len(rec.Fields[i])
			rec.Fields[i] = d.fieldBuf[p : p+l : p+l]
			p += l
		}
	}
	rec.Fields = append(rec.Fields, d.fieldBuf[startAt:len(d.fieldBuf):len(d.fieldBuf)])
}

// isWatched reports whether name is one of Options.WatchFields. Most
// names differ from all of them in their first byte or length, which a
// table answers without comparing.
func (d *Decoder) isWatched(name []byte) bool {
	if !d.watch {
		return false
	}
	if len(name) == 0 {
		return d.watchEmpty
	}
	if d.watchFirst[name[0]]&(1<<min(len(name)-1, 7)) == 0 {
		return false
	}
	for _, w := range d.opts.WatchFields {
		if w == string(name) {
			return true
		}
	}
	return false
}

// watchValue captures the value of field name if it is watched.
func (d *Decoder) watchValue(name, value []byte) {
	rec := &d.rec
	for i, w := range d.opts.WatchFields {
		if w == string(name) && len(rec.Watched) < len(d.opts.WatchFields) {
			v := value
			if len(v) > maxWatchedValue {
				v = v[:maxWatchedValue]
			}
			// One reused buffer per watched name: no allocation per key.
			d.watchBuf[i] = append(d.watchBuf[i][:0], v...)
			rec.Watched = append(rec.Watched, Field{Name: w, Value: d.watchBuf[i]})
		}
	}
}

// ---- strings -------------------------------------------------------------------
