package report

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

// Command is the report's command line, shared by `wopneg report` and the
// report module's command: the flags, once bound to a FlagSet and parsed,
// say how to count and how to write.
type Command struct {
	json    bool
	names   string
	period  string
	changes []Change
}

// Bind defines the report's flags on fs: --json, --names FILE,
// --period day|week|month, and --floor and --drop, each repeatable.
func (c *Command) Bind(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "write the report as JSON")
	fs.StringVar(&c.names, "names", "", "name peers by the `FILE` wopneg digest wrote (\"<digest>  <origin>\" lines)")
	fs.StringVar(&c.period, "period", string(Month), "group exchanges by `day`, week or month (UTC)")
	for _, f := range []struct{ kind, usage string }{
		{"floor", "show what raising the floor to `[PROTOCOL=]VERSION` would refuse; repeatable"},
		{"drop", "show what no longer offering `[PROTOCOL=]VERSION` would refuse; repeatable"},
	} {
		fs.Func(f.kind, f.usage, func(s string) error {
			ch, err := ParseChange(f.kind, s)
			c.changes = append(c.changes, ch)
			return err
		})
	}
}

// Tally returns a Tally counting as the flags say.
func (c *Command) Tally() (*Tally, error) {
	p, err := ParsePeriod(c.period)
	if err != nil {
		return nil, err
	}
	return New(Options{Period: p, Changes: c.changes})
}

// ReadFiles reads each named file into t as JSON lines; "-" is stdin.
func ReadFiles(t *Tally, files []string, stdin io.Reader) error {
	for _, name := range files {
		if name == "-" {
			if err := t.ReadLines(stdin, "stdin"); err != nil {
				return err
			}
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		err = t.ReadLines(f, name)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Write names the peers (with --names) and writes r as the flags say:
// text, or JSON with --json.
func (c *Command) Write(w io.Writer, r Report) error {
	if c.names != "" {
		f, err := os.Open(c.names)
		if err != nil {
			return err
		}
		names, err := ReadNames(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.names, err)
		}
		r.Name(names)
	}
	if !c.json {
		return WriteText(w, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
