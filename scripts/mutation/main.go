// Command mutation measures how well a package's tests guard its code:
// it makes small deliberate bugs (mutants) in the package's files, one at
// a time, and runs the tests that concern each file against each. A test
// that fails kills the mutant; a mutant every test passes lived, and
// names a promise no test checks.
//
// Nothing in the work tree is changed: each mutant reaches the compiler
// through go's -overlay, so an interrupted run leaves no trace. Mutants:
//
//   - CONDITIONALS_NEGATION: == and !=, < and >=, > and <= swapped
//   - CONDITIONALS_BOUNDARY: < and <=, > and >= swapped
//   - ARITHMETIC_BASE: + and -, * and /, % made *
//   - INVERT_LOGICAL: && and || swapped
//   - INVERT_NOT: a ! removed
//   - INCREMENT_DECREMENT: ++ and -- swapped
//   - REMOVE_STATEMENT: a call, an assignment (not a declaration) or an
//     increment removed
//
// A mutant that does not compile is "not viable" and counts for nothing;
// one whose tests run past the timeout is killed (a bug that hangs the
// tests is caught). Mutants listed as equivalent (-equivalent: the code
// behaves the same, so no test can tell) count for nothing either. The
// score of a file is killed / (killed + lived).
//
// Which tests concern a file is the -runs file's: lines "file.go REGEXP"
// (the -run pattern of its tests; "*" for every file not named), # for
// comments. -base COMMIT measures the tests as they were then: each of
// the package's test files that differs from that commit's is replaced by
// the commit's (and one the commit lacks left out), through the overlay.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

type mutant struct {
	file  string // base name
	line  int
	col   int
	kind  string
	what  string // e.g. "< → <="
	start int    // byte range replaced
	end   int
	repl  string
}

func (m mutant) id() string {
	return fmt.Sprintf("%s:%d:%d %s %s", m.file, m.line, m.col, m.kind, m.what)
}

type result int

const (
	killed result = iota
	lived
	timedOut
	notViable
	equivalent
)

func (r result) String() string {
	return [...]string{"KILLED", "LIVED", "TIMED OUT", "NOT VIABLE", "EQUIVALENT"}[r]
}

func main() {
	pkg := flag.String("pkg", "./transfer", "the package, from the module's root")
	runsPath := flag.String("runs", "", "file of \"file.go REGEXP\" lines: the tests of each file")
	filesFlag := flag.String("files", "", "comma-separated files of the package to mutate (default: every non-test file)")
	sample := flag.Int("sample", 0, "at most this many mutants per file, chosen by -seed (0: all)")
	seed := flag.Int64("seed", 34, "the sample's seed")
	workers := flag.Int("workers", 2, "mutants tested at once")
	factor := flag.Int("timeout-factor", 5, "a mutant's tests time out after this many times the unmutated run (at least -min-timeout)")
	minTimeout := flag.Duration("min-timeout", 30*time.Second, "the least timeout of a mutant's tests")
	short := flag.Bool("short", true, "run the tests with -test.short")
	base := flag.String("base", "", "a commit: measure the package's test files as they were then")
	equivPath := flag.String("equivalent", "", "file of mutant ids (as printed) that are equivalent, one a line")
	verbose := flag.Bool("v", false, "print every mutant's result")
	priorPath := flag.String("prior", "", "the log (-v) of an earlier run: its results are taken as they are, not tested again")
	retestLived := flag.Bool("retest-lived", false, "test again the mutants -prior found living (tests added since may kill them; none can make a killed one live)")
	list := flag.Bool("list", false, "list the mutants (after -sample) without testing them")
	flag.Parse()

	root, err := os.Getwd()
	check(err)
	dir, err := filepath.Abs(filepath.Join(root, *pkg))
	check(err)
	runs := map[string]string{}
	if *runsPath != "" {
		runs = readPairs(*runsPath)
	}
	equiv := map[string]bool{}
	if *equivPath != "" {
		for _, l := range readLines(*equivPath) {
			equiv[l] = true
		}
	}
	prior := map[string]result{}
	if *priorPath != "" {
		prior = readPrior(*priorPath)
	}
	tmp, err := os.MkdirTemp("", "mutation-")
	check(err)
	defer os.RemoveAll(tmp)

	var based map[string]string // the commit's test files; nil: today's
	if *base != "" {
		based = baseFiles(root, dir, *base, tmp)
	}

	var files []string
	if *filesFlag != "" {
		files = strings.Split(*filesFlag, ",")
	} else {
		ents, err := os.ReadDir(dir)
		check(err)
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				files = append(files, n)
			}
		}
	}

	type row struct {
		file   string
		counts [5]int
		lived  []string
		note   string
	}
	var rows []row
	for _, file := range files {
		run := runs[file]
		if run == "" {
			run = runs["*"]
		}
		r := row{file: file}
		src, err := os.ReadFile(filepath.Join(dir, file))
		check(err)
		ms := mutants(file, src)
		if *sample > 0 && len(ms) > *sample {
			h := fnv.New64a()
			h.Write([]byte(file))
			rng := rand.New(rand.NewSource(*seed ^ int64(h.Sum64())))
			rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
			ms = ms[:*sample]
			sort.Slice(ms, func(i, j int) bool { return ms[i].start < ms[j].start })
		}
		if *list {
			for _, m := range ms {
				fmt.Println(m.id())
			}
			continue
		}
		fresh := 0
		for _, m := range ms {
			if r, seen := prior[m.id()]; !equiv[m.id()] && (!seen || r == lived && *retestLived) {
				fresh++
			}
		}
		// The unmutated tests must pass, and set the timeout.
		took := time.Duration(0)
		if fresh > 0 {
			began := time.Now()
			res, out := test(root, dir, tmp, "unmutated-"+file, based, "", nil, run, *short, time.Hour)
			took = time.Since(began)
			if res != lived {
				r.note = "the unmutated tests fail"
				fmt.Fprintf(os.Stderr, "%s: the unmutated tests fail (-run %q):\n%s\n", file, run, tail(out))
				rows = append(rows, r)
				continue
			}
		}
		timeout := max(time.Duration(*factor)*took, *minTimeout)
		fmt.Fprintf(os.Stderr, "%s: %d mutants (%d to test), -run %q, unmutated %s, timeout %s\n", file, len(ms), fresh, run, took.Round(time.Second), timeout.Round(time.Second))

		var mu sync.Mutex
		jobs := make(chan int)
		var wg sync.WaitGroup
		results := make([]result, len(ms))
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					m := ms[i]
					res, seen := prior[m.id()]
					switch {
					case equiv[m.id()]:
						res = equivalent
					case seen && !(res == lived && *retestLived):
					default:
						mutated := slices.Concat(src[:m.start], []byte(m.repl), src[m.end:])
						res, _ = test(root, dir, tmp, fmt.Sprintf("m%d-%s", i, file), based, filepath.Join(dir, file), mutated, run, *short, timeout)
					}
					results[i] = res
					if *verbose || res == lived {
						mu.Lock()
						fmt.Fprintf(os.Stderr, "  %-10s %s\n", res, m.id())
						mu.Unlock()
					}
				}
			}()
		}
		for i := range ms {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		for i, res := range results {
			r.counts[res]++
			if res == lived {
				r.lived = append(r.lived, ms[i].id())
			}
		}
		rows = append(rows, r)
	}

	if *list {
		return
	}
	fmt.Printf("| file | mutants | killed | timed out | lived | not viable | equivalent | score |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var tot [5]int
	for _, r := range rows {
		if r.note != "" {
			fmt.Printf("| %s | | | | | | | %s |\n", r.file, r.note)
			continue
		}
		for i := range tot {
			tot[i] += r.counts[i]
		}
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %s |\n", r.file, sum(r.counts[:]), r.counts[killed], r.counts[timedOut], r.counts[lived], r.counts[notViable], r.counts[equivalent], score(r.counts))
	}
	fmt.Printf("| all | %d | %d | %d | %d | %d | %d | %s |\n", sum(tot[:]), tot[killed], tot[timedOut], tot[lived], tot[notViable], tot[equivalent], score(tot))
	for _, r := range rows {
		for _, l := range r.lived {
			fmt.Printf("lived: %s\n", l)
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func score(c [5]int) string {
	k := c[killed] + c[timedOut]
	if k+c[lived] == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(k)/float64(k+c[lived]))
}

// test builds the package's tests (commit's when based is not nil), with
// file replaced by src when given, and runs those matching run: lived when they pass.
func test(root, dir, tmp, name string, based map[string]string, file string, src []byte, run string, short bool, timeout time.Duration) (result, []byte) {
	work := filepath.Join(tmp, name)
	check(os.MkdirAll(work, 0o755))
	defer os.RemoveAll(work)
	ov := map[string]string{}
	if based != nil {
		ov = baseOverlay(dir, based)
	}
	if file != "" {
		p := filepath.Join(work, filepath.Base(file))
		check(os.WriteFile(p, src, 0o644))
		ov[file] = p
	}
	ovPath := filepath.Join(work, "overlay.json")
	b, _ := json.Marshal(map[string]any{"Replace": ov})
	check(os.WriteFile(ovPath, b, 0o644))
	bin := filepath.Join(work, "pkg.test")
	build := exec.Command("go", "test", "-c", "-o", bin, "-overlay", ovPath, "./"+mustRel(root, dir))
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return notViable, out
	}
	args := []string{"-test.count=1", "-test.timeout=" + timeout.String()}
	if run != "" {
		args = append(args, "-test.run="+run)
	}
	if short {
		args = append(args, "-test.short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	began := time.Now()
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return lived, out
	case ctx.Err() != nil || time.Since(began) >= timeout || bytes.Contains(out, []byte("panic: test timed out")):
		return timedOut, out
	}
	return killed, out
}

func mustRel(root, dir string) string {
	r, err := filepath.Rel(root, dir)
	check(err)
	return filepath.ToSlash(r)
}

// baseFiles writes commit's test files of the package to tmp: the names
// of the files that stand for them.
func baseFiles(root, dir, commit, tmp string) map[string]string {
	rel := mustRel(root, dir)
	out, err := exec.Command("git", "-C", root, "ls-tree", "--name-only", commit+":"+rel).Output()
	check(err)
	files := map[string]string{}
	for _, n := range strings.Fields(string(out)) {
		if !strings.HasSuffix(n, "_test.go") {
			continue
		}
		then, err := exec.Command("git", "-C", root, "show", commit+":"+rel+"/"+n).Output()
		check(err)
		p := filepath.Join(tmp, "base-"+n)
		check(os.WriteFile(p, then, 0o644))
		files[n] = p
	}
	return files
}

// baseOverlay has the package's test files be commit's (written by
// baseFiles): each one the commit has stands for today's, and one it
// lacks is left out. Read at each build, so test files written during a
// run do not reach it.
func baseOverlay(dir string, base map[string]string) map[string]string {
	ov := map[string]string{}
	ents, err := os.ReadDir(dir)
	check(err)
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, "_test.go") {
			ov[filepath.Join(dir, n)] = base[n] // "": not there then
		}
	}
	for n, p := range base {
		ov[filepath.Join(dir, n)] = p
	}
	return ov
}

// mutants finds the file's mutants, in the order they appear.
func mutants(file string, src []byte) []mutant {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	check(err)
	var ms []mutant
	add := func(pos token.Pos, end int, kind, what, repl string) {
		p := fset.Position(pos)
		ms = append(ms, mutant{file: file, line: p.Line, col: p.Column, kind: kind, what: what, start: p.Offset, end: end, repl: repl})
	}
	op := func(pos token.Pos, from token.Token, to token.Token, kind string) {
		off := fset.Position(pos).Offset
		add(pos, off+len(from.String()), kind, from.String()+" → "+to.String(), to.String())
	}
	negation := map[token.Token]token.Token{token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR}
	boundary := map[token.Token]token.Token{token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR}
	arith := map[token.Token]token.Token{token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL}
	logical := map[token.Token]token.Token{token.LAND: token.LOR, token.LOR: token.LAND}
	var consts [][2]token.Pos
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			consts = append(consts, [2]token.Pos{g.Pos(), g.End()})
		}
	}
	inConst := func(n ast.Node) bool {
		for _, c := range consts {
			if n.Pos() >= c[0] && n.End() <= c[1] {
				return true
			}
		}
		return false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil || inConst(n) {
			return false
		}
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if to, ok := negation[x.Op]; ok {
				op(x.OpPos, x.Op, to, "CONDITIONALS_NEGATION")
			}
			if to, ok := boundary[x.Op]; ok {
				op(x.OpPos, x.Op, to, "CONDITIONALS_BOUNDARY")
			}
			if to, ok := arith[x.Op]; ok && !stringy(x) {
				op(x.OpPos, x.Op, to, "ARITHMETIC_BASE")
			}
			if to, ok := logical[x.Op]; ok {
				op(x.OpPos, x.Op, to, "INVERT_LOGICAL")
			}
		case *ast.UnaryExpr:
			if x.Op == token.NOT {
				add(x.OpPos, fset.Position(x.OpPos).Offset+1, "INVERT_NOT", "! removed", "")
			}
		case *ast.IncDecStmt:
			to := token.DEC
			if x.Tok == token.DEC {
				to = token.INC
			}
			op(x.TokPos, x.Tok, to, "INCREMENT_DECREMENT")
			add(x.Pos(), fset.Position(x.End()).Offset, "REMOVE_STATEMENT", "removed", "")
		case *ast.ExprStmt:
			if _, ok := x.X.(*ast.CallExpr); ok {
				add(x.Pos(), fset.Position(x.End()).Offset, "REMOVE_STATEMENT", "call removed", "")
			}
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				add(x.Pos(), fset.Position(x.End()).Offset, "REMOVE_STATEMENT", "assignment removed", "")
			}
		}
		return true
	})
	return ms
}

// stringy reports whether a + joins strings (a literal on either side of
// the chain): swapping it for - does not compile, so it is no mutant.
func stringy(x *ast.BinaryExpr) bool {
	if x.Op != token.ADD {
		return false
	}
	found := false
	ast.Inspect(x, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && (l.Kind == token.STRING) {
			found = true
		}
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.SelectorExpr); ok && (id.Sel.Name == "Error" || id.Sel.Name == "String") {
				found = true
			}
			return false
		}
		return !found
	})
	return found
}

// readPrior reads the results a -v log printed.
func readPrior(path string) map[string]result {
	m := map[string]result{}
	for _, l := range readLines(path) {
		for r := killed; r <= equivalent; r++ {
			if id, ok := strings.CutPrefix(l, r.String()+" "); ok {
				m[strings.TrimSpace(id)] = r
			}
		}
	}
	return m
}

func readLines(path string) []string {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	var ls []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			ls = append(ls, l)
		}
	}
	check(sc.Err())
	return ls
}

var pairRE = regexp.MustCompile(`^(\S+)\s+(.*)$`)

func readPairs(path string) map[string]string {
	m := map[string]string{}
	for _, l := range readLines(path) {
		p := pairRE.FindStringSubmatch(l)
		if p == nil {
			fmt.Fprintf(os.Stderr, "%s: unreadable line %q\n", path, l)
			os.Exit(2)
		}
		m[p[1]] = p[2]
	}
	return m
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		os.Exit(1)
	}
}
