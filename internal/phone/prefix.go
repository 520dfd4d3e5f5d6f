package phone

import (
	"strconv"

	"github.com/nyaruka/phonenumbers"
)

// CallingCodeOf is the calling code a digit prefix (of a rate card)
// begins with, "" when it begins with none. Calling codes are prefix-free,
// so at most one length matches.
func CallingCodeOf(prefix string) string {
	for n := 1; n <= 3 && n <= len(prefix); n++ {
		cc, err := strconv.Atoi(prefix[:n])
		if err != nil || prefix[0] == '0' {
			return ""
		}
		if phonenumbers.GetRegionCodeForCountryCode(cc) != phonenumbers.UNKNOWN_REGION {
			return prefix[:n]
		}
	}
	return ""
}

// RegionOf names the main region of a calling code ("GB" for 44), "" when
// it is not one.
func RegionOf(cc string) string {
	n, err := strconv.Atoi(cc)
	if err != nil {
		return ""
	}
	if r := phonenumbers.GetRegionCodeForCountryCode(n); r != phonenumbers.UNKNOWN_REGION {
		return r
	}
	return ""
}
