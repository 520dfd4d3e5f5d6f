package phone

import (
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// callingCodes holds, for each calling code libphonenumber knows, what it
// takes to build the number phonenumbers.Parse would build from our input
// without its text parser. Our input is bare digits, country code first, so
// all Parse does that matters is: take the first calling code it knows
// (1 to 3 digits), maybe strip a national prefix after it, and note leading
// zeros. Indexed by the code itself.
type callingCodes [1000]*callingCode

type callingCode struct {
	// nationalPrefix is the region's national prefix (or carrier code)
	// pattern as Parse applies it, anchored at the start; nil when the
	// region has none.
	nationalPrefix *regexp.Regexp
	// transforms: Parse rewrites the national number around what the
	// prefix captures instead of just cutting the prefix off.
	transforms bool
	// unsure: the metadata could not be read, so Parse must decide.
	unsure bool
	// single is the metadata of the code's region when the code is that
	// region's alone (nil for codes shared by regions, like 1 and 44, and
	// for non-geographic ones). Its fixed-line and mobile patterns are
	// compiled on the code's first number (common): compiling them for
	// every code at start took a dozen milliseconds, and an installation
	// sends to a few countries.
	single     *phonenumbers.PhoneMetadata
	commonOnce sync.Once
	common     *commonTypes
}

// commonTypes returns the code's compiled fixed-line and mobile patterns,
// or nil when the library must decide.
func (c *callingCode) commonTypes() *commonTypes {
	c.commonOnce.Do(func() {
		if c.single != nil {
			c.common = newCommonTypes(c.single)
		}
	})
	return c.common
}

// commonTypes is enough of a region's metadata to find most valid numbers
// valid at once. libphonenumber's IsValidNumberForRegion asks whether a
// number matches the region's general pattern and then one of its types,
// trying premium-rate, toll-free, shared-cost, VoIP, personal, pager, UAN
// and voicemail before fixed-line and mobile, building each pattern's
// text anew and running it twice: twenty regular expressions for a mobile
// number. A number that matches the general pattern and the fixed-line or
// the mobile one is valid whatever it would also match; any other number
// is left to the library.
type commonTypes struct {
	region                 string
	general, fixed, mobile numberDesc
}

// numberDesc is one number type of a region, as libphonenumber matches it:
// one of its possible lengths, if it lists any, and its whole pattern.
type numberDesc struct {
	lengths []int32
	re      *regexp.Regexp // nil: no pattern, nothing matches
}

func newNumberDesc(d *phonenumbers.PhoneNumberDesc) (numberDesc, error) {
	pat := d.GetNationalNumberPattern()
	if pat == "" {
		return numberDesc{}, nil
	}
	re, err := regexp.Compile("^(?:" + pat + ")$")
	return numberDesc{lengths: d.GetPossibleLength(), re: re}, err
}

func (d numberDesc) matches(nsn string) bool {
	if d.re == nil {
		return false
	}
	if len(d.lengths) > 0 && !slices.Contains(d.lengths, int32(len(nsn))) {
		return false
	}
	return d.re.MatchString(nsn)
}

func newCommonTypes(meta *phonenumbers.PhoneMetadata) *commonTypes {
	c := &commonTypes{region: meta.GetId()}
	var errs [3]error
	c.general, errs[0] = newNumberDesc(meta.GetGeneralDesc())
	c.fixed, errs[1] = newNumberDesc(meta.GetFixedLine())
	c.mobile, errs[2] = newNumberDesc(meta.GetMobile())
	if errs[0] != nil || errs[1] != nil || errs[2] != nil {
		return nil // the library decides, as it can
	}
	return c
}

// valid says whether a national significant number is surely valid.
func (c *commonTypes) valid(nsn string) bool {
	return c.general.matches(nsn) && (c.fixed.matches(nsn) || c.mobile.matches(nsn))
}

func newCallingCodes() *callingCodes {
	var t callingCodes
	byRegion, nonGeo, err := metadataIndex()
	for code := range phonenumbers.GetSupportedCallingCodes() {
		if code <= 0 || code >= len(t) {
			continue // Parse reads at most 3 digits of calling code
		}
		if err != nil {
			t[code] = &callingCode{unsure: true}
			continue
		}
		// Parse strips the national prefix of the code's main region.
		region := phonenumbers.GetRegionCodeForCountryCode(code)
		meta := byRegion[region]
		if region == "001" {
			meta = nonGeo[int32(code)]
		}
		t[code] = newCallingCode(meta)
		if regions := phonenumbers.GetRegionCodesForCountryCode(code); len(regions) == 1 && region != "001" && meta != nil &&
			int(meta.GetCountryCode()) == code {
			t[code].single = meta
		}
	}
	return &t
}

// metadataIndex finds each region's metadata (and each non-geographic
// code's) the way libphonenumber itself indexes its collection.
func metadataIndex() (map[string]*phonenumbers.PhoneMetadata, map[int32]*phonenumbers.PhoneMetadata, error) {
	coll, err := phonenumbers.MetadataCollection()
	if err != nil {
		return nil, nil, err
	}
	byRegion := make(map[string]*phonenumbers.PhoneMetadata)
	nonGeo := make(map[int32]*phonenumbers.PhoneMetadata)
	for _, m := range coll.GetMetadata() {
		if m.GetId() == "001" {
			nonGeo[m.GetCountryCode()] = m
		} else {
			byRegion[m.GetId()] = m
		}
	}
	return byRegion, nonGeo, nil
}

func newCallingCode(meta *phonenumbers.PhoneMetadata) *callingCode {
	prefix := meta.GetNationalPrefixForParsing()
	if prefix == "" {
		return &callingCode{} // nothing to strip, nor metadata to strip it with
	}
	// The same pattern text Parse compiles, so that it matches the same.
	re, err := regexp.Compile("^(?:" + prefix + ")")
	if err != nil {
		return &callingCode{unsure: true}
	}
	return &callingCode{nationalPrefix: re, transforms: meta.GetNationalPrefixTransformRule() != ""}
}

// parse is phone.Parse without libphonenumber's text parser, whenever the
// table can tell what that parser would make of digits.
func (t *callingCodes) parse(digits string) (Number, error) {
	if err := checkFormat(digits); err != nil {
		return Number{}, err
	}
	n, c, sure := t.number(digits)
	if !sure {
		return parseFull(digits)
	}
	if n == nil {
		return Number{}, ErrInvalid
	}
	if common := c.commonTypes(); common != nil && common.valid(phonenumbers.GetNationalSignificantNumber(n)) {
		return number(digits, n, common.region), nil
	}
	return validate(digits, n)
}

// number is what phonenumbers.Parse returns for "+"+digits (nil for its
// error: no calling code it knows), when the table can be sure of it.
// digits must have passed checkFormat.
func (t *callingCodes) number(digits string) (n *phonenumbers.PhoneNumber, c *callingCode, sure bool) {
	code, c := t.lookup(digits)
	if c == nil {
		return nil, nil, true
	}
	national := digits[len(code):]
	if c.unsure || c.mayStrip(national) {
		return nil, nil, false
	}
	cc, _ := strconv.Atoi(code)
	nn, _ := strconv.ParseUint(national, 10, 64)
	n = &phonenumbers.PhoneNumber{CountryCode: new(int32(cc)), NationalNumber: new(nn)}
	setLeadingZeros(n, national)
	return n, c, true
}

// lookup finds the calling code digits start with: like Parse, the
// shortest prefix it knows.
func (t *callingCodes) lookup(digits string) (string, *callingCode) {
	code := 0
	for i := 0; i < 3 && i < len(digits); i++ {
		code = code*10 + int(digits[i]-'0')
		if c := t[code]; c != nil {
			return digits[:i+1], c
		}
	}
	return "", nil
}

// mayStrip says whether Parse could change national by removing a national
// prefix. When the prefix pattern does not match, or matches nothing and
// captures nothing for a rewrite, Parse leaves the number as it was.
// Anything else is left to Parse: whether it strips depends on more
// patterns and possible lengths.
func (c *callingCode) mayStrip(national string) bool {
	if c.nationalPrefix == nil || !c.nationalPrefix.MatchString(national) {
		return false
	}
	m := c.nationalPrefix.FindStringSubmatchIndex(national)
	rewrites := c.transforms && m[len(m)-2] >= 0
	return m[1] > 0 || rewrites
}

// setLeadingZeros records zeros after the calling code (Italy's fixed
// lines, some others) as Parse does: a uint64 cannot keep them. A national
// number of zeros only keeps its last one in NationalNumber.
func setLeadingZeros(n *phonenumbers.PhoneNumber, national string) {
	if len(national) < 2 || national[0] != '0' {
		return
	}
	n.ItalianLeadingZero = new(true)
	zeros := 1
	for zeros < len(national)-1 && national[zeros] == '0' {
		zeros++
	}
	if zeros != 1 { // 1 is the field's default
		n.NumberOfLeadingZeros = new(int32(zeros))
	}
}
