package result

import "github.com/gauntlet-k8s/gauntlet/internal/secret"

// HideSecretData replaces, in place, the want and got of every finding
// and prediction about secret data (a Secret's data, stringData or
// binaryData; a kubernetes_secret's data) with the values' digests, so a
// page shows whether two sides agree and never what they hold. Gauntlet's
// runner calls it before a run is returned, and every renderer again on
// the run it is given.
func (r *Run) HideSecretData() {
	if r == nil {
		return
	}
	for i := range r.Stages {
		st := &r.Stages[i]
		for j := range st.Checks {
			hideFindings(st.Checks[j].Findings)
		}
		for j := range st.Breaks {
			br := &st.Breaks[j]
			hideFindings(br.Got)
			for k := range br.Predictions {
				p := &br.Predictions[k]
				if secret.IsSecretField(p.Object, p.Address, p.Field) {
					p.Got = secret.Shown(p.Got)
				}
			}
		}
	}
}

func hideFindings(fs []Finding) {
	for i := range fs {
		f := &fs[i]
		if secret.IsSecretField(f.Object, f.Address, f.Field) {
			f.Want, f.Got = secret.Shown(f.Want), secret.Shown(f.Got)
		}
	}
}

// SecretDataHidden is a copy of r with HideSecretData applied; r is not
// changed. Renderers call it on the run they are given.
func (r *Run) SecretDataHidden() *Run {
	if r == nil {
		return nil
	}
	c := *r
	c.Stages = append([]Stage(nil), r.Stages...)
	for i := range c.Stages {
		st := &c.Stages[i]
		st.Checks = append([]Check(nil), st.Checks...)
		for j := range st.Checks {
			st.Checks[j].Findings = append([]Finding(nil), st.Checks[j].Findings...)
		}
		st.Breaks = append([]Break(nil), st.Breaks...)
		for j := range st.Breaks {
			br := &st.Breaks[j]
			br.Got = append([]Finding(nil), br.Got...)
			br.Predictions = append([]Prediction(nil), br.Predictions...)
		}
	}
	c.HideSecretData()
	return &c
}
