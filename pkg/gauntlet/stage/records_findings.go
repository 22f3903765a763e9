package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/gauntlet-k8s/gauntlet/internal/recordstore"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// The record-store checks' findings: what a record, a lock or a root's
// directory holds, against what it must. recordstore reports in text (it
// sits below the result model); these say the same as data.
const (
	fieldRecord     = "record"
	fieldRecordHold = "record holds"
	fieldLineage    = "lineage"
	fieldSerial     = "serial"
	fieldHolder     = "lock holder"
	changed         = "changed"
	wentBack        = "went back"
	heldWord        = "held"
	fieldLockWrites = "lock writes on the wire during the apply"
)

func secretObject(s recordstore.Store) string { return "Secret " + s.Namespace + "/" + s.SecretName() }
func leaseObject(s recordstore.Store) string  { return "Lease " + s.Namespace + "/" + s.LeaseName() }

// readRecordFinding reads a store's record: no record is a finding (the
// record absent), any other failure a measurement error.
func readRecordFinding(ctx context.Context, sd *Side, s recordstore.Store) (*recordstore.Record, error) {
	got, err := readRecord(ctx, sd, s)
	switch {
	case errors.Is(err, recordstore.ErrNoRecord):
		return nil, &result.Finding{Object: secretObject(s), Field: fieldRecord, Want: present, Got: absent, Detail: err.Error()}
	case err != nil:
		return nil, measure(sd, "read "+s.String(), err)
	}
	return got, nil
}

// managesFindings is recordstore.Manages as findings: every address the
// record lacks or holds beyond the engine's list.
func managesFindings(s recordstore.Store, rec *recordstore.Record, engine []string) error {
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, a := range l {
			m[a] = true
		}
		return m
	}
	have, want := in(rec.Managed), in(engine)
	var fs []*result.Finding
	for a := range want {
		if !have[a] {
			fs = append(fs, &result.Finding{Address: a, Object: secretObject(s), Field: fieldRecordHold, Want: present, Got: absent, Detail: fmt.Sprintf("serial %d", rec.Serial)})
		}
	}
	for a := range have {
		if !want[a] {
			fs = append(fs, &result.Finding{Address: a, Object: secretObject(s), Field: fieldRecordHold, Want: absent, Got: present, Detail: fmt.Sprintf("serial %d", rec.Serial)})
		}
	}
	sortFindings(fs)
	return result.Findings(fs...)
}

// followsFindings is recordstore.Follows as findings.
func followsFindings(s recordstore.Store, before, after *recordstore.Record) error {
	var fs []*result.Finding
	if after.Lineage != before.Lineage {
		fs = append(fs, &result.Finding{Object: secretObject(s), Field: fieldLineage, Want: unchanged, Got: changed, Detail: before.Lineage + " -> " + after.Lineage})
	}
	if after.Serial < before.Serial {
		fs = append(fs, &result.Finding{Object: secretObject(s), Field: fieldSerial, Want: "grows or holds", Got: wentBack, Detail: fmt.Sprintf("%d -> %d", before.Serial, after.Serial)})
	}
	return result.Findings(fs...)
}

// releasedFinding is recordstore.Released as a finding.
func releasedFinding(s recordstore.Store, lk *recordstore.Lock) error {
	if lk.Holder != "" {
		return &result.Finding{Object: leaseObject(s), Field: fieldHolder, Want: "none", Got: heldWord, Detail: fmt.Sprintf("lock %s (%s by %s)", lk.Holder, lk.Operation, lk.Who)}
	}
	return nil
}

// readLockFinding reads a store's lock; a failed read is a measurement
// error.
func readLockFinding(ctx context.Context, sd *Side, s recordstore.Store) (*recordstore.Lock, error) {
	cs, err := sd.Typed()
	if err != nil {
		return nil, measure(sd, "client", err)
	}
	lk, err := recordstore.ReadLock(ctx, cs, s)
	if err != nil {
		return nil, measure(sd, "read "+leaseObject(s), err)
	}
	return lk, nil
}

// localStateFindings names the state files beside a root on the
// kubernetes backend, by the root's name.
func localStateFindings(root, dir string) error {
	var fs []*result.Finding
	for _, f := range []string{"terraform.tfstate", "terraform.tfstate.d"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			fs = append(fs, localFile(root, f, present))
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Object < fs[j].Object })
	return result.Findings(fs...)
}

func localFile(root, file, got string) *result.Finding {
	return &result.Finding{Object: file + " beside root " + root, Field: fieldExists, Want: absent, Got: got}
}
