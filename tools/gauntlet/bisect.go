package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/atomicfile"
	"github.com/gauntlet-k8s/gauntlet/internal/bisect"
	"github.com/gauntlet-k8s/gauntlet/internal/bugs"
	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/internal/unpinned"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func bisectCommand() cli.Command {
	return cli.Command{
		Name: "bisect", Args: "<estate>", MinArgs: 1, MaxArgs: 1,
		Summary: "find the pinned release where a stage's finding appears or goes, by running that stage on the engines between two",
		Doc: "Orders the pinned engines of one family from --good to --bad (either may be the older: a bug that appeared, or one " +
			"that was fixed), runs the estate's --stage (with the stages it depends on) on the bad end, then the good one - each must be what it " +
			"is named, or bisect stops there - then halves the span until " +
			"two adjacent releases differ: bad is the stage failing (with --finding's text, when given), good is the stage passing, " +
			"anything else is skipped and stepped around. Writes bisect.md, bisect.json and each step's evidence in a folder per " +
			"engine. With --releases the candidates are every release of that engine the Go module proxy serves between the two " +
			"ends, pinned or not: an unpinned one is built on demand into the toolchain cache (minutes each, cold), and its step's " +
			"page says which module version and hash it ran. Narrowing to a commit between two adjacent releases needs their " +
			"commits in order, which the module proxy does not list: run the commits you pick with `gauntlet run --engine tofu@<commit>`.",
		Examples: []cli.Example{
			{What: "where tofu stopped losing provider functions in parentheses", Command: `gauntlet bisect reference-provider-functions --stage migrate --bad tofu@1.8.11 --good tofu@1.12.6 --finding "Call to unknown function"`},
			{What: "the same between two pinned releases, over every release in between", Command: `gauntlet bisect reference-provider-functions --stage migrate --bad tofu@1.9.4 --good tofu@1.10.10 --releases --finding "Call to unknown function"`},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var f bisectFlags
			f.tf = &toolchainFlags{}
			f.tf.register(fs, false)
			estates := registerEstates(fs)
			fs.StringVar(&f.stage, "stage", "", "the stage `ID` whose outcome is sought (required)")
			fs.StringVar(&f.good, "good", "", "a pinned `ENGINE` on which the stage passes, such as tofu@1.12.6 (required)")
			fs.StringVar(&f.bad, "bad", "", "a pinned `ENGINE` of the same family on which the stage fails (required)")
			fs.StringVar(&f.finding, "finding", "", "the `TEXT` a bad run's stage detail or a check must carry (default: any fail is bad)")
			fs.BoolVar(&f.releases, "releases", false, "bisect over every release between --good and --bad that the Go module proxy serves, building the unpinned ones (default: the pinned engines only)")
			fs.StringVar(&f.out, "out", "", "the `DIR` to write bisect.md, bisect.json and one evidence folder per engine to (default: out/bisect/<estate>)")
			return func(ctx context.Context, args []string) error {
				if f.stage == "" || f.good == "" || f.bad == "" {
					return cli.Usagef("bisect", "--stage, --good and --bad are required")
				}
				if !stage.Default().Known(f.stage) {
					return cli.Usagef("bisect", "--stage %s is not a stage (stages: %s)", f.stage, strings.Join(stage.Default().IDs(), ", "))
				}
				f.estates = *estates
				f.reproduce = "go run ./tools/gauntlet bisect " + strings.Join(fs.CommandLine(), " ")
				return runBisect(ctx, args[0], f)
			}
		},
	}
}

type bisectFlags struct {
	tf                                                 *toolchainFlags
	estates, stage, good, bad, finding, out, reproduce string
	releases                                           bool
}

// bisectCandidates lists the pinned engines of good's and bad's family
// from the older of the two to the newer, and the indices of good and bad.
func bisectCandidates(pins *toolchain.Pins, good, bad string) (refs []toolchain.EngineRef, gi, bi int, err error) {
	g, err := pins.Engine(good)
	if err != nil {
		return nil, 0, 0, err
	}
	b, err := pins.Engine(bad)
	if err != nil {
		return nil, 0, 0, err
	}
	if err := bisectEnds(g.String(), b.String()); err != nil {
		return nil, 0, 0, err
	}
	for _, e := range pins.Engines() {
		if e.Engine == g.Engine {
			refs = append(refs, e)
		}
	}
	gi = slices.Index(refs, g)
	bi = slices.Index(refs, b)
	lo, hi := min(gi, bi), max(gi, bi)
	return refs[lo : hi+1], gi - lo, bi - lo, nil
}

// bisectEnds refuses ends (engine@version) that are not two versions of
// one engine.
func bisectEnds(good, bad string) error {
	ge, gv, _ := strings.Cut(good, "@")
	be, bv, _ := strings.Cut(bad, "@")
	switch {
	case ge != be:
		return fmt.Errorf("--good %s and --bad %s are of two engines: bisect within one", good, bad)
	case gv == bv:
		return fmt.Errorf("--good and --bad are the same engine, %s", good)
	}
	return nil
}

// releaseCandidates lists the releases of good's and bad's engine that
// the Go module proxy serves, from the older of the two to the newer
// (both must be exact releases of one engine), and the indices of good
// and bad.
func releaseCandidates(ctx context.Context, b unpinned.Builder, good, bad string) (names []string, gi, bi int, err error) {
	if err := bisectEnds(good, bad); err != nil {
		return nil, 0, 0, err
	}
	ge, gv, _ := strings.Cut(good, "@")
	_, bv, _ := strings.Cut(bad, "@")
	vs, err := b.Releases(ctx, ge, gv, bv)
	if err != nil {
		return nil, 0, 0, err
	}
	for _, v := range vs {
		names = append(names, ge+"@"+v)
	}
	gi, bi = slices.Index(names, good), slices.Index(names, bad)
	if gi < 0 || bi < 0 {
		return nil, 0, 0, fmt.Errorf("--good %s and --bad %s must both be releases the Go module proxy serves; it serves %s", good, bad, strings.Join(names, ", "))
	}
	return names, gi, bi, nil
}

// bisectOutKeepsTreeClean refuses an --out inside the checkout that git
// does not ignore: the first probe's folder would be untracked, so every
// later probe would run from a "-dirty" tree, which a bug catalogue row
// cannot cite.
func bisectOutKeepsTreeClean(ctx context.Context, out string) error {
	inside, ignored, err := conformance.Git{Dir: "."}.Ignores(ctx, out)
	if err != nil || !inside || ignored {
		return nil // outside a checkout (or no git): nothing to make dirty
	}
	return fmt.Errorf("--out %s is inside the checkout and not ignored: the first probe's folder would make every later probe's tree dirty, so no step could be cited; write under out/ (ignored) or outside the checkout, then copy the folder in", out)
}

func runBisect(ctx context.Context, name string, f bisectFlags) error {
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return err
	}
	var names []string
	var gi, bi int
	kind := "pinned engines"
	if f.releases {
		kind = "releases served"
		l := log.New(os.Stderr)
		b := unpinned.Builder{Pins: pins, Lookup: unpinned.GoLookup, Info: unpinned.GoInfo, Options: f.tf.options(l)}
		l.Infof("bisect: asking the Go module proxy for the releases between %s and %s (a lookup each)", f.good, f.bad)
		if names, gi, bi, err = releaseCandidates(ctx, b, f.good, f.bad); err != nil {
			return cli.Usagef("bisect", "%v", err)
		}
	} else {
		refs, g, b, err := bisectCandidates(pins, f.good, f.bad)
		if err != nil {
			return cli.Usagef("bisect", "%v", err)
		}
		gi, bi = g, b
		for _, e := range refs {
			names = append(names, e.String())
		}
	}
	if f.out == "" {
		f.out = filepath.Join("out", "bisect", name)
	}
	if err := bisectOutKeepsTreeClean(ctx, f.out); err != nil {
		return cli.Usagef("bisect", "%v", err)
	}
	fmt.Printf("bisect %s, stage %s: %d %s, %s\n", name, f.stage, len(names), kind, strings.Join(names, ", "))
	probe := func(ctx context.Context, engine string) (bisect.Step, error) {
		// A release the proxy lists but will not hand over, or one that
		// does not build here, cannot be placed: stepped around, said.
		built, err := f.tf.unpinnedEngine(ctx, engine, log.New(os.Stderr))
		if err != nil {
			if ctx.Err() != nil {
				return bisect.Step{}, ctx.Err()
			}
			s := bisect.Step{Engine: engine, Outcome: bisect.Skip, Why: "could not be built: " + err.Error()}
			fmt.Printf("bisect: %s is %s: %s\n", engine, s.Outcome, s.Why)
			return s, nil
		}
		dir := filepath.Join(f.out, strings.ReplaceAll(engine, "@", "-"))
		res, err := runOne(ctx, runParams{name: name, estates: f.estates, out: dir, sides: sideFlags{engine: engine, substrate: "local"},
			stages: []string{f.stage}, tf: *f.tf, reproduce: f.reproduce, built: built})
		if err != nil {
			return bisect.Step{}, err
		}
		s := judgeProbe(res, f.stage, f.finding)
		s.Engine = engine
		s.Evidence = filepath.ToSlash(filepath.Join(filepath.Base(dir), evidence.MarkdownFile))
		fmt.Printf("bisect: %s is %s: %s\n", engine, s.Outcome, s.Why)
		return s, nil
	}
	r, runErr := bisect.Run(ctx, names, gi, bi, probe)
	if r == nil {
		return runErr
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := bisect.Markdown(&md, r, bisect.Page{Estate: name, Stage: f.stage, Finding: f.finding, Reproduce: f.reproduce}); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	for file, data := range map[string][]byte{"bisect.md": md.Bytes(), "bisect.json": append(raw, '\n')} {
		if err := atomicfile.Write(filepath.Join(f.out, file), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Println("wrote", filepath.Join(f.out, "bisect.md"))
	if runErr != nil {
		return runErr
	}
	fmt.Printf("bisect: %s -> %s (exact: %v)\n", r.Before, r.After, r.Exact)
	return nil
}

// judgeProbe places one engine's run: good when the stage passed, bad
// when it failed saying the finding (any fail without one), skip else.
func judgeProbe(res *result.Run, stageID, finding string) bisect.Step {
	for i := range res.Stages {
		st := &res.Stages[i]
		if st.ID != stageID {
			continue
		}
		switch {
		case st.Verdict == result.Pass:
			return bisect.Step{Outcome: bisect.Good, Why: stageID + " passed"}
		case st.Verdict == result.Fail && finding == "":
			return bisect.Step{Outcome: bisect.Bad, Why: stageID + " failed"}
		case st.Verdict == result.Fail:
			if line := bugs.Says(st, finding); line != "" {
				return bisect.Step{Outcome: bisect.Bad, Why: stageID + " failed: " + line}
			}
			return bisect.Step{Outcome: bisect.Skip, Why: stageID + " failed without saying " + fmt.Sprintf("%q", finding)}
		default:
			why := string(st.Verdict)
			if st.Cause != "" {
				why += " (" + string(st.Cause) + ")"
			}
			return bisect.Step{Outcome: bisect.Skip, Why: stageID + " is " + why}
		}
	}
	return bisect.Step{Outcome: bisect.Skip, Why: "the run has no stage " + stageID}
}
