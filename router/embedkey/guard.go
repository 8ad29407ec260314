package embedkey

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The lexical guard: an embedding does not see a changed number, name or
// negation, nor two roles swapped ("Tokyo is larger than Delhi", "Delhi is
// larger than Tokyo"): all-MiniLM-L6-v2 puts such pairs above 0.97. Two
// answers agree only if the guard finds them stating the same facts and
// their similarity reaches the threshold. The guard compares
//
//   - the numbers, in order (number words read as digits, separators
//     dropped: "two" is 2, "1,250" is 1250);
//   - the polarity: a negation in one answer and none in the other
//     ("not", "no", "never", "n't", ...) is a different statement;
//   - the names (capitalized words; a sentence's first word too, unless
//     the other answer writes it in lower case), in order;
//   - the order of the content words both answers use, so that two roles
//     cannot swap ("the buyer pays the seller", "the seller pays the
//     buyer");
//   - words of a kind where each excludes the others: where both answers
//     use words of one kind, they must use the same ("open", "closed";
//     "minute", "hour"; "kilometre", "mile"; ordinals are numbers).
//
// It counts many paraphrases apart (a false disagreement costs a run; a
// false agreement settles on a changed fact).

// facts is what the guard reads of an answer.
type facts struct {
	words    []string // content words, normalized, at their first occurrence
	numbers  []string // numbers, normalized, in order
	names    []string // capitalized words, lower-cased, in order; "^" marks a sentence's first
	lower    []string // words written in lower case
	negative bool     // a negation is present
}

// sameFacts reports whether a and b state the same facts as the guard
// sees them.
func sameFacts(a, b facts) bool {
	if a.negative != b.negative || !slices.Equal(a.numbers, b.numbers) {
		return false
	}
	if !slices.Equal(namesOf(a, b), namesOf(b, a)) {
		return false
	}
	for _, kind := range kinds {
		ka, kb := ofKind(a.words, kind), ofKind(b.words, kind)
		if len(ka) > 0 && len(kb) > 0 && !slices.Equal(ka, kb) {
			return false
		}
	}
	return slices.Equal(shared(a.words, b.words), shared(b.words, a.words))
}

// namesOf is a's names, with its sentence-initial capitalized words that
// are no stopword and that b does not write in lower case, in a's order.
func namesOf(a, b facts) []string {
	var out []string
	for _, n := range a.names {
		if strings.HasPrefix(n, "^") {
			if n = n[1:]; stopwords[n] || negations[n] || slices.Contains(b.lower, n) {
				continue
			}
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ofKind is the words of a among kind, in a's order.
func ofKind(a []string, kind map[string]bool) []string {
	var out []string
	for _, w := range a {
		if kind[w] {
			out = append(out, w)
		}
	}
	return out
}

// shared is the words of a that b also uses, in a's order.
func shared(a, b []string) []string {
	var out []string
	for _, w := range a {
		if slices.Contains(b, w) {
			out = append(out, w)
		}
	}
	return out
}

// factsOf reads the facts of text.
func factsOf(text string) facts {
	var f facts
	start := true // at a sentence's start
	for _, tok := range tokens(text) {
		if tok == "." || tok == "!" || tok == "?" || tok == ":" {
			start = true
			continue
		}
		w := strings.ToLower(tok)
		if unicode.IsUpper([]rune(tok)[0]) {
			n := normalize(w)
			if start {
				n = "^" + n // a name unless the other answer writes it in lower case
			}
			f.names = append(f.names, n)
		} else {
			f.lower = append(f.lower, normalize(w))
		}
		start = false
		if rest, ok := strings.CutSuffix(w, "n't"); ok {
			f.negative = true
			w = rest
		}
		switch {
		case negations[w]:
			f.negative = true
			continue
		case w == "" || stopwords[w]:
			continue
		}
		w = normalize(w)
		if isNumber(w) {
			f.numbers = append(f.numbers, w)
		}
		if !slices.Contains(f.words, w) {
			f.words = append(f.words, w)
		}
	}
	return f
}

// tokens splits text into words, numbers and sentence ends ("." "!" "?"
// ":"). An apostrophe inside a word, and a comma or a point between
// digits, stay in the token.
func tokens(text string) []string {
	rs := []rune(strings.ReplaceAll(text, "’", "'"))
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for i, r := range rs {
		inner := i > 0 && i+1 < len(rs)
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == '\'' && inner && unicode.IsLetter(rs[i-1]) && unicode.IsLetter(rs[i+1]):
			b.WriteRune(r)
		case (r == ',' || r == '.') && inner && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]):
			if r == '.' {
				b.WriteRune(r)
			}
		case (r == '-' || r == '−') && i+1 < len(rs) && unicode.IsDigit(rs[i+1]) &&
			(i == 0 || !unicode.IsLetter(rs[i-1]) && !unicode.IsDigit(rs[i-1])):
			flush()
			b.WriteRune('-') // a minus sign: -5 is not 5
		case r == '.' || r == '!' || r == '?' || r == ':':
			flush()
			out = append(out, string(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// normalize folds the forms of a lower-case word that state the same
// fact: a number word to its digits, a possessive or a plural to the word.
func normalize(w string) string {
	if n, ok := numberWords[w]; ok {
		return strconv.Itoa(n)
	}
	w = strings.TrimSuffix(w, "'s")
	if w == "" || isNumber(w) || len(w) <= 3 || strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

// negations are the words that turn a statement into its negation.
var negations = set("not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "nowhere", "without")

// stopwords carry no fact: articles, forms of be, have and do, and
// fillers. Prepositions, pronouns, modals and quantifiers are not among
// them: "to" and "from", "he" and "she", "may" and "must", "least" and
// "most" change a fact.
var stopwords = set("a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am",
	"has", "have", "had", "do", "does", "did", "yes", "of", "that", "which", "it", "its",
	"this", "there", "also", "just", "very", "so", "and", "then", "indeed")

// kinds are sets of words of which each excludes the others: two answers
// that use words of one kind must use the same ones. Word forms are as
// normalize leaves them.
var kinds = []map[string]bool{
	set("open", "closed", "close"), set("pass", "passed", "fail", "failed"),
	set("win", "won", "lose", "lost", "beat"), set("increase", "increased", "decrease", "decreased", "rise", "rose", "fall", "fell"),
	set("higher", "lower"), set("larger", "smaller"), set("more", "less", "fewer"), set("most", "least"),
	set("above", "below"), set("before", "after"), set("over", "under"), set("early", "late", "earlier", "later"),
	set("first", "last"), set("approved", "rejected", "accepted", "declined"), set("allow", "allowed", "forbid", "forbidden"),
	set("true", "false"), set("valid", "invalid"), set("correct", "incorrect", "wrong"), set("guilty", "innocent"),
	set("buy", "bought", "sell", "sold"), set("add", "added", "remove", "removed"), set("fix", "fixed", "cause", "caused"),
	set("weekday", "weekend"), set("noon", "midnight", "morning", "afternoon", "evening", "night"), set("minimum", "maximum"),
	set("north", "south", "east", "west"), set("left", "right"), set("in", "out"), set("on", "off"), set("up", "down"),
	set("to", "from"), set("he", "she", "they"), set("his", "her", "their"), set("may", "must", "can", "should", "will"),
	set("second", "minute", "hour", "day", "week", "month", "year", "decade", "century"),
	set("mm", "cm", "metre", "meter", "kilometre", "kilometer", "km", "mile", "foot", "feet", "inch", "yard"),
	set("gram", "kilogram", "kg", "pound", "ounce", "tonne", "ton"), set("dollar", "euro", "yen", "franc", "pound", "rupee"),
	set("percent", "percentage", "point"),
}

// numberWords are the number words read as numbers.
var numberWords = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
	"nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
	"seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
	"third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isNumber reports whether a token is a number: a digit first, after an
// optional minus sign.
func isNumber(w string) bool {
	w = strings.TrimPrefix(w, "-")
	return w != "" && unicode.IsDigit([]rune(w)[0])
}
