package workload

import (
	"strconv"
	"strings"
	"unicode"
)

// Kind is the kind of a synthetic node; its String is the node type sent
// to kgctx.
type Kind uint8

// Node kinds, in the order their id ranges are laid out.
const (
	KindService Kind = iota
	KindPackage
	KindFile
	KindInterface
	KindError
	KindFunction
	numKinds
)

var kindNames = [numKinds]string{"service", "package", "file", "interface", "error", "function"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// radix is one mixed-radix vocabulary: size is the number of distinct word
// tuples, inner the part whose digits are scrambled. Scrambling multiplies
// the index by a unit modulo inner, so consecutive indexes differ in every
// position and a 50-node graph already shows varied names; the digits
// above inner (optional qualifiers) are not scrambled, so small graphs use
// the plain forms ("ParseInvoiceLine", not "ParseInvoiceLineOnce").
type radix struct {
	inner, size uint64
	mul         uint64
}

func newRadix(inner, outer int) radix {
	r := radix{inner: uint64(inner), size: uint64(inner) * uint64(outer)}
	m := uint64(float64(inner)*0.6180339887) | 1
	for gcd(m, r.inner) != 1 {
		m += 2
	}
	r.mul = m
	return r
}

// split returns the scrambled inner digit block, the outer digit and the
// cycle number (how many times the whole vocabulary has been used up).
func (r radix) split(i int) (inner, outer, cycle int) {
	u := uint64(i)
	cycle = int(u / r.size)
	u %= r.size
	outer = int(u / r.inner)
	inner = int((u % r.inner) * r.mul % r.inner)
	return inner, outer, cycle
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

var (
	serviceRadix = newRadix(len(domains)*len(serviceQualifiers), len(serviceTiers))
	funcRadix    = newRadix(len(verbs)*len(nouns)*len(objects), len(funcQualifiers))
	ifaceRadix   = newRadix(len(nouns)*len(ifaceRoles), len(ifacePrefixes))
	errorRadix   = newRadix(len(nouns)*len(errorOps)*len(errorConds), 1)
)

// Lower-case prose forms of the vocabulary, computed once: descriptions
// are built for every streamed edge, and splitting camel case on each call
// dominated generation time.
var (
	domainWords      = wordsOf(domains)
	svcQualWords     = wordsOf(serviceQualifiers)
	nounWords        = wordsOf(nouns)
	objectWords      = wordsOf(objects)
	ifacePrefixWords = wordsOf(ifacePrefixes)

	domainSlugs  = lowerOf(domains)
	svcQualSlugs = lowerOf(serviceQualifiers)
	svcTierSlugs = lowerOf(serviceTiers)
)

func lowerOf(list []string) []string {
	out := make([]string, len(list))
	for i, w := range list {
		out[i] = strings.ToLower(w)
	}
	return out
}

func wordsOf(list []string) []string {
	out := make([]string, len(list))
	for i, w := range list {
		out[i] = camelWords(w)
	}
	return out
}

// cycleSuffix is appended when an index exceeds a vocabulary: words never
// end in a digit, so the suffix keeps names decodable.
func cycleSuffix(cycle int) string {
	if cycle == 0 {
		return ""
	}
	return strconv.Itoa(cycle + 1)
}

// camelWords splits "FeatureFlags" into "feature flags" for descriptions
// and queries.
func camelWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

type serviceParts struct {
	domain, qual, tier string
	di, qi, ti         int
	cycle              int
}

func serviceOf(s int) serviceParts {
	in, out, cyc := serviceRadix.split(s)
	di, qi := in%len(domains), in/len(domains)
	return serviceParts{
		domain: domains[di], qual: serviceQualifiers[qi], tier: serviceTiers[out],
		di: di, qi: qi, ti: out, cycle: cyc,
	}
}

func (p serviceParts) name() string {
	return p.domain + p.qual + p.tier + cycleSuffix(p.cycle) + "Service"
}

// slug is the service's segment in package paths: "payments-gateway-eu".
func (p serviceParts) slug() string {
	s := domainSlugs[p.di]
	if p.qual != "" {
		s += "-" + svcQualSlugs[p.qi]
	}
	if p.tier != "" {
		s += "-" + svcTierSlugs[p.ti]
	}
	if p.cycle > 0 {
		s += "-" + cycleSuffix(p.cycle)
	}
	return s
}

// words is how people refer to the service in prose: "payments gateway".
func (p serviceParts) words() string {
	if p.qual == "" {
		return domainWords[p.di]
	}
	return domainWords[p.di] + " " + svcQualWords[p.qi]
}

func (p serviceParts) description(s int) string {
	tier := ""
	if p.tier != "" {
		tier = " (" + camelWords(p.tier) + " deployment)"
	}
	w := p.words()
	switch s % 3 {
	case 0:
		return "Owns " + w + " data and the APIs around it" + tier + "."
	case 1:
		return "Runs the " + w + " workloads for the platform" + tier + "."
	default:
		return strings.ToUpper(w[:1]) + w[1:] + " service" + tier + "; talks to its dependencies over gRPC."
	}
}

// componentPath names the k-th package of a service: a component, then a
// subcomponent once the components are used up.
func componentPath(k int) (path string, comp word) {
	comp = components[k%len(components)]
	path = comp.name
	if r := k / len(components); r > 0 {
		path += "/" + subcomponents[(r-1)%len(subcomponents)] + cycleSuffix((r-1)/len(subcomponents))
	}
	return path, comp
}

func fileWord(k int) (string, word) {
	w := fileWords[k%len(fileWords)]
	return w.name + cycleSuffix(k/len(fileWords)) + ".go", w
}

type funcParts struct {
	verb         verb
	noun, object string
	ni, oi       int
	qual         string
	cycle        int
}

func funcOf(x int) funcParts {
	in, out, cyc := funcRadix.split(x)
	ni, oi := (in/len(verbs))%len(nouns), in/(len(verbs)*len(nouns))
	return funcParts{
		verb: verbs[in%len(verbs)], noun: nouns[ni], object: objects[oi],
		ni: ni, oi: oi, qual: funcQualifiers[out], cycle: cyc,
	}
}

func (p funcParts) name() string {
	return p.verb.name + p.noun + p.object + p.qual + cycleSuffix(p.cycle)
}

type ifaceParts struct {
	prefix, noun string
	pi, ni       int
	role         word
	cycle        int
}

func ifaceOf(i int) ifaceParts {
	in, out, cyc := ifaceRadix.split(i)
	ni := in % len(nouns)
	return ifaceParts{
		prefix: ifacePrefixes[out], noun: nouns[ni], pi: out, ni: ni,
		role: ifaceRoles[in/len(nouns)], cycle: cyc,
	}
}

func (p ifaceParts) name() string {
	return p.prefix + p.noun + p.role.name + cycleSuffix(p.cycle)
}

func (p ifaceParts) description() string {
	if p.prefix == "" {
		return "Interface for " + nounWords[p.ni] + " " + p.role.phrase + "."
	}
	return "Interface for " + ifacePrefixWords[p.pi] + " " + nounWords[p.ni] + " " + p.role.phrase + "."
}

type errorParts struct {
	noun     string
	ni       int
	op, cond word
	cycle    int
}

func errorOf(e int) errorParts {
	in, _, cyc := errorRadix.split(e)
	ni := in % len(nouns)
	return errorParts{
		noun: nouns[ni], ni: ni,
		op:    errorOps[(in/len(nouns))%len(errorOps)],
		cond:  errorConds[in/(len(nouns)*len(errorOps))],
		cycle: cyc,
	}
}

func (p errorParts) name() string {
	return "Err" + p.noun + p.op.name + p.cond.name + cycleSuffix(p.cycle)
}

// message is the error's text, which is also its description: "timeout
// reading invoice".
func (p errorParts) message() string {
	return p.cond.phrase + " " + p.op.phrase + " " + nounWords[p.ni]
}
