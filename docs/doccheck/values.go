package doccheck

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A value is what the code gives a field left zero, as a default cell
// may state it.
type value struct {
	// words are the ways a cell may state it, the first the one to
	// write; nil when any words do (a described value).
	words []string
	// from says where the code gets it, for the failure message.
	from string
	// broken, when set, says the code no longer does what a described
	// value claimed: any words fail.
	broken string
}

// identifier is a Go name or a qualified one (binding.DefaultSlowCall).
var identifier = regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$`)

// named adds to v's words the constant that from names, if it names one
// ("DefaultSlowCall" and "binding.DefaultSlowCall" both state its value).
func named(v value) value {
	if identifier.MatchString(v.from) {
		v.words = append(v.words, v.from)
		if i := strings.LastIndex(v.from, "."); i >= 0 {
			v.words = append(v.words, v.from[i+1:])
		}
	}
	return v
}

// count is a number of things: 8192 reads "8192" or "8,192".
func count(n int64, from string) value {
	return named(value{words: uniq(strconv.FormatInt(n, 10), grouped(n)), from: from})
}

// size is a number of bytes: 67108864 reads "64 MiB", "64MiB",
// "67108864" or "67,108,864".
func size(n int64, from string) value {
	var words []string
	for _, u := range []struct {
		name  string
		shift uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			m := strconv.FormatInt(n>>u.shift, 10)
			words = append(words, m+" "+u.name, m+u.name)
			break
		}
	}
	return named(value{words: uniq(append(words, strconv.FormatInt(n, 10), grouped(n))...), from: from})
}

// duration is a time: 90 s reads "90 s", "90s" or "1m30s"; a whole
// number of minutes also "N m" and "N min", of hours "N h".
func duration(d time.Duration, from string) value {
	var words []string
	for _, u := range []struct {
		unit  time.Duration
		names []string
	}{{time.Hour, []string{"h"}}, {time.Minute, []string{"m", "min"}}, {time.Second, []string{"s"}}, {time.Millisecond, []string{"ms"}}} {
		if d != 0 && d%u.unit == 0 {
			n := strconv.FormatInt(int64(d/u.unit), 10)
			for _, name := range u.names {
				words = append(words, n+" "+name, n+name)
			}
		}
	}
	return named(value{words: uniq(append(words, d.String())...), from: from})
}

// text is a string, as written.
func text(s, from string) value { return named(value{words: []string{s}, from: from}) }

// flag is a boolean: "false" or "off", "true" or "on".
func flag(b bool, from string) value {
	if b {
		return value{words: []string{"true", "on"}, from: from}
	}
	return value{words: []string{"false", "off"}, from: from}
}

// mode is a file mode in octal: "0600".
func mode(m os.FileMode, from string) value {
	return named(value{words: []string{fmt.Sprintf("%04o", uint32(m.Perm()))}, from: from})
}

// required is a field without which the code refuses the config: the
// cell says "required". refused is whether the code refused a config
// without it.
func required(refused bool, from string) value {
	if !refused {
		return value{from: from, broken: "the code takes a config without it: it is not required"}
	}
	return value{words: []string{"required"}, from: from}
}

// described is a zero the code keeps, whose meaning the cell says in
// words of its own: any words do while holds (the code still keeps the
// zero, or still does what the words say).
func described(holds bool, from string) value {
	if !holds {
		return value{from: from, broken: "the code no longer keeps this zero as the table describes it"}
	}
	return value{from: from}
}

// grouped writes n with a comma every three digits: 8,192.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// uniq is words without repeats, in order.
func uniq(words ...string) []string {
	var out []string
	for _, w := range words {
		if w != "" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
