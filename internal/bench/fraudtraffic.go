package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
)

// The fraud bench's traffic: an hour of five accounts' ordinary sends,
// drawn from a seed so that every run (and both halves of a guard off/on
// comparison) sends exactly the same messages in the same order, with a
// pumping attack on one of them mixed in. Each send is labelled, so a run
// can tell which stopped messages were the attack and which were customers.
//
// The ordinary traffic is built from what businesses actually send: login
// and sign-up codes (one message, sometimes a retry or two a minute or so
// later), order and delivery notices (one to three messages to the same
// person over the following half hour), a delivery company's morning batch,
// and a fintech's on-call alerts to two staff phones. Most recipients are
// new in the hour, some come back (a customer who logs in twice), and most
// of an account's sends go to its home country with a few percent abroad.
// The attack is what SMS pumping looks like on a sign-up form: a bot asks
// for codes to sequential numbers in three ranges of a country the account
// rarely sends to, a few a minute at first and ramping up to one or two a
// second by the end of the hour.

// Label says whose a send is: the accounts' customers', or the attack's.
type Label uint8

const (
	LabelNormal Label = iota
	LabelAttack
)

func (l Label) String() string {
	if l == LabelAttack {
		return "attack"
	}
	return "normal"
}

// Send kinds, for the report and the tests.
const (
	KindOTP      = "otp"
	KindNotice   = "notice"
	KindCampaign = "campaign"
	KindStaff    = "staff"
	KindPump     = "pump"
)

// FraudSend is one send of the traffic.
type FraudSend struct {
	At      time.Duration // into the hour
	Account int           // index into Traffic.Accounts
	To      string        // E.164 digits
	Label   Label
	Kind    string
}

// Share is a country's share of an account's sends, in percent.
type Share struct {
	Country string
	Percent float64
}

// TrafficAccount is one account of the model and how it sends.
type TrafficAccount struct {
	Name    string
	Home    string  // calling code of its home country
	PerHour float64 // expected ordinary messages in the hour
	OTP     float64 // share of its sessions that are codes (the rest are notices)
	Abroad  []Share
	// Staff are its own people's phones, which get StaffPerHour alerts
	// each: an operator puts them on the trusted list.
	Staff        []string
	StaffPerHour float64
	// Campaign sends CampaignSize notices to distinct recipients from
	// CampaignAt over three minutes (0: none).
	CampaignAt   time.Duration
	CampaignSize int
}

// Countries are the calling codes the account sends to: home first.
func (a TrafficAccount) Countries() []string {
	out := []string{a.Home}
	for _, s := range a.Abroad {
		out = append(out, s.Country)
	}
	return out
}

// Attack is the pumping attack on one account.
type Attack struct {
	Account int
	Country string
	Ranges  []string // numbers without their last three digits
	Start   time.Duration
	// PerMinuteAtStart ramps linearly to PerMinuteAtEnd at the end of the hour.
	PerMinuteAtStart, PerMinuteAtEnd float64
}

// Traffic is the model: its accounts, the attack, and the hour's sends in
// the order they are made.
type Traffic struct {
	Seed     uint64
	Accounts []TrafficAccount
	Attack   Attack
	Sends    []FraudSend
}

// DefaultTrafficAccounts are the model's five accounts. Their hourly
// volumes are a busy afternoon hour of small and mid-sized senders.
func DefaultTrafficAccounts() []TrafficAccount {
	return []TrafficAccount{
		{Name: "Loja Verde (shop, BR)", Home: "55", PerHour: 1800, OTP: 0.4,
			Abroad: []Share{{"351", 1.2}, {"54", 0.8}, {"1", 0.6}, {"34", 0.3}}},
		{Name: "Northwind Pay (fintech, US)", Home: "1", PerHour: 2400, OTP: 0.85,
			Abroad: []Share{{"52", 1.5}, {"44", 0.6}, {"91", 0.4}, {"49", 0.2}},
			Staff:  []string{"12125550142", "14155550187"}, StaffPerHour: 18},
		{Name: "Parcelly (deliveries, GB)", Home: "44", PerHour: 1200, OTP: 0.1,
			Abroad:     []Share{{"353", 2.5}, {"33", 0.8}, {"34", 0.6}, {"49", 0.3}},
			CampaignAt: 25 * time.Minute, CampaignSize: 300},
		{Name: "Tandem (language app, DE)", Home: "49", PerHour: 900, OTP: 0.9,
			Abroad: []Share{{"33", 2}, {"34", 1.5}, {"44", 1.5}, {"90", 1.2}, {"1", 1}, {"91", 0.5}, {"998", 0.15}}},
		{Name: "Bazaar (marketplace, IN)", Home: "91", PerHour: 3000, OTP: 0.5,
			Abroad: []Share{{"971", 1}, {"44", 0.4}, {"1", 0.3}, {"61", 0.2}}},
	}
}

// DefaultAttack pumps the language app's sign-up codes into three
// Uzbek mobile ranges, a country it sends a message or two an hour to.
func DefaultAttack() Attack {
	return Attack{Account: 3, Country: "998", Ranges: []string{"998934512", "998901367", "998977248"},
		Start: 12 * time.Minute, PerMinuteAtStart: 1, PerMinuteAtEnd: 90}
}

// NewTraffic draws the hour of traffic of seed.
func NewTraffic(seed uint64) Traffic {
	t := Traffic{Seed: seed, Accounts: DefaultTrafficAccounts(), Attack: DefaultAttack()}
	t.Sends = t.hour(0, true)
	return t
}

// History is the ordinary traffic of the hour ago hours before the
// bench's hour (ago ≥ 1): the same accounts drawn from another stream of
// the seed, without the attack. The bench feeds it to the guard as the
// accounts' trailing volumes.
func (t Traffic) History(ago int) []FraudSend {
	return t.hour(ago, false)
}

// hour draws hour ago (0: the bench's own hour).
func (t Traffic) hour(ago int, attack bool) []FraudSend {
	var sends []FraudSend
	for i, a := range t.Accounts {
		g := newDrawer(t.Seed, uint64(ago), uint64(i))
		sends = append(sends, g.account(i, a)...)
	}
	if attack {
		g := newDrawer(t.Seed, uint64(ago), 1000)
		sends = append(sends, g.attack(t.Attack)...)
	}
	// Drawn account by account; sent in time order. A stable sort keeps
	// the drawing order for equal times, so the order is the seed's alone.
	sort.SliceStable(sends, func(i, j int) bool { return sends[i].At < sends[j].At })
	return sends
}

// drawer draws one account's (or the attack's) sends of one hour.
type drawer struct {
	r *rand.Rand
}

func newDrawer(seed, hour, stream uint64) *drawer {
	return &drawer{r: rand.New(rand.NewPCG(seed, hour<<32|stream))}
}

const hour = time.Hour

// at is a uniformly random moment of the minute range [from, to).
func (g *drawer) at(from, to time.Duration) time.Duration {
	return from + time.Duration(g.r.Int64N(int64(to-from)))
}

// poissonTimes are the arrivals of a Poisson process of rate perHour over
// the hour, its rate varying by ±25 % over the hour as a real afternoon's
// does (a slow start, a peak, a dip).
func (g *drawer) poissonTimes(perHour float64) []time.Duration {
	var out []time.Duration
	peak := perHour * 1.25
	t := 0.0
	for {
		t += g.r.ExpFloat64() / peak // hours
		if t >= 1 {
			return out
		}
		rate := perHour * (1 + 0.25*math.Sin(2*math.Pi*(t-0.15)))
		if g.r.Float64()*peak <= rate {
			out = append(out, time.Duration(t*float64(hour)))
		}
	}
}

func (g *drawer) account(i int, a TrafficAccount) []FraudSend {
	var sends []FraudSend
	add := func(at time.Duration, to, kind string) {
		if at < hour {
			sends = append(sends, FraudSend{At: at, Account: i, To: to, Label: LabelNormal, Kind: kind})
		}
	}
	// Sessions: the expected messages per session are 1.23 for a code
	// (15 % retry once, 4 % twice) and 1.7 for notices.
	perSession := a.OTP*1.23 + (1-a.OTP)*1.7
	var seen []string // recipients of earlier sessions
	for _, at := range g.poissonTimes(a.PerHour / perSession) {
		// A fifth of the sessions are someone who already had one this
		// hour (a customer who logs in again, or orders twice).
		var to string
		if len(seen) > 0 && g.r.Float64() < 0.2 {
			to = seen[g.r.IntN(len(seen))]
		} else {
			to = g.number(g.country(a))
			seen = append(seen, to)
		}
		if g.r.Float64() < a.OTP {
			add(at, to, KindOTP)
			for retry, p := 0, g.r.Float64(); retry < 2 && p < []float64{0.19, 0.04}[retry]; retry++ {
				at += g.at(30*time.Second, 3*time.Minute)
				add(at, to, KindOTP)
			}
			continue
		}
		n := 1 + g.r.IntN(10)/5 + g.r.IntN(10)/8 // 1: 40 %, 2: 50 %, 3: 10 %
		for k := 0; k < n; k++ {
			add(at, to, KindNotice)
			at += g.at(5*time.Minute, 25*time.Minute)
		}
	}
	for _, staff := range a.Staff {
		for _, at := range g.poissonTimes(a.StaffPerHour) {
			add(at, staff, KindStaff)
		}
	}
	if a.CampaignSize > 0 {
		for k := 0; k < a.CampaignSize; k++ {
			add(a.CampaignAt+g.at(0, 3*time.Minute), g.number(a.Home), KindCampaign)
		}
	}
	return sends
}

// country picks the destination of a session: home, or abroad by the
// account's shares.
func (g *drawer) country(a TrafficAccount) string {
	p := g.r.Float64() * 100
	for _, s := range a.Abroad {
		if p < s.Percent {
			return s.Country
		}
		p -= s.Percent
	}
	return a.Home
}

// attack is the ramp: arrivals of a Poisson process whose rate grows
// linearly from the start to the end of the hour, each to the next number
// of one of the ranges (taken in turn at random), as a bot walks them.
func (g *drawer) attack(at Attack) []FraudSend {
	next := make([]int, len(at.Ranges))
	for i := range next {
		next[i] = 100 + g.r.IntN(300) // where the bot starts in each range
	}
	span := (hour - at.Start).Minutes()
	peak := max(at.PerMinuteAtStart, at.PerMinuteAtEnd)
	var sends []FraudSend
	for m := 0.0; ; {
		m += g.r.ExpFloat64() / peak // minutes after the start
		if m >= span {
			return sends
		}
		rate := at.PerMinuteAtStart + (at.PerMinuteAtEnd-at.PerMinuteAtStart)*m/span
		if g.r.Float64()*peak > rate {
			continue
		}
		k := g.r.IntN(len(at.Ranges))
		to := fmt.Sprintf("%s%03d", at.Ranges[k], next[k]%1000)
		next[k]++
		sends = append(sends, FraudSend{At: at.Start + time.Duration(m*float64(time.Minute)), Account: at.Account, To: to,
			Label: LabelAttack, Kind: KindPump})
	}
}

// mobilePlans are mobile number prefixes of the model's countries and how
// many random digits follow each: enough for libphonenumber to call the
// result a valid number of the country.
var mobilePlans = map[string]struct {
	prefixes []string
	digits   int
}{
	"55":  {[]string{"55119", "55219", "55319", "55419", "55519", "55619", "55719", "55819", "55859", "55199"}, 8},
	"1":   {[]string{"1212", "1415", "1312", "1617", "1206", "1512", "1305", "1404", "1646", "1720"}, 7},
	"44":  {[]string{"4474", "4475", "4477", "4478", "4479"}, 8},
	"49":  {[]string{"49151", "49152", "49157", "49160", "49170", "49171", "49172", "49175", "49176", "49177"}, 7},
	"91":  {[]string{"919", "918", "917", "916"}, 9},
	"351": {[]string{"35191", "35192", "35193", "35196"}, 7},
	"54":  {[]string{"54911", "54935", "54926"}, 8},
	"52":  {[]string{"5255", "5233", "5281"}, 8},
	"353": {[]string{"35383", "35385", "35386", "35387", "35389"}, 7},
	"33":  {[]string{"336", "337"}, 8},
	"34":  {[]string{"346"}, 8},
	"90":  {[]string{"90530", "90532", "90533", "90542", "90555"}, 7},
	"998": {[]string{"99890", "99891", "99893", "99894", "99897", "99899"}, 7},
	"971": {[]string{"97150", "97152", "97155", "97156"}, 7},
	"61":  {[]string{"614"}, 8},
}

// number draws a valid mobile number of country that the simulator
// delivers (it fails numbers ending in 0001 to 0005).
func (g *drawer) number(country string) string {
	plan, ok := mobilePlans[country]
	if !ok {
		panic("bench: no numbering plan for +" + country)
	}
	for {
		var b strings.Builder
		b.WriteString(plan.prefixes[g.r.IntN(len(plan.prefixes))])
		for range plan.digits {
			b.WriteByte(byte('0' + g.r.IntN(10)))
		}
		s := b.String()
		if end := s[len(s)-4:]; end >= "0001" && end <= "0005" {
			continue
		}
		if _, err := phone.Parse(s); err == nil {
			return s
		}
	}
}

// TrafficSummary is what a traffic holds, for the report and the tests.
type TrafficSummary struct {
	Normal, Attack     int
	ByAccount          []int
	Recipients         int     // distinct normal recipients
	RepeatShare        float64 // share of normal sends to a recipient sent to before in the hour
	MaxPerRecipient    int     // most normal sends to one number that is not on a staff list
	MaxPerRange        int     // most normal sends of one account to one range
	HomeShare          float64 // share of normal sends to the account's home country
	AttackCountryShare float64 // the attacked account's normal sends to the attack's country, in percent
}

// Summary counts the traffic.
func (t Traffic) Summary() TrafficSummary {
	s := TrafficSummary{ByAccount: make([]int, len(t.Accounts))}
	staff := map[string]bool{}
	for _, a := range t.Accounts {
		for _, n := range a.Staff {
			staff[n] = true
		}
	}
	perTo := map[string]int{}
	perRange := map[string]int{}
	home, victim, victimThere := 0, 0, 0
	for _, m := range t.Sends {
		if m.Label == LabelAttack {
			s.Attack++
			continue
		}
		s.Normal++
		s.ByAccount[m.Account]++
		key := fmt.Sprint(m.Account, "/", m.To)
		if perTo[key] > 0 {
			s.RepeatShare++
		}
		perTo[key]++
		if !staff[m.To] {
			s.MaxPerRecipient = max(s.MaxPerRecipient, perTo[key])
			rk := fmt.Sprint(m.Account, "/", domain.RangeOf(m.To))
			perRange[rk]++
			s.MaxPerRange = max(s.MaxPerRange, perRange[rk])
		}
		cc := countryOf(m.To)
		if cc == t.Accounts[m.Account].Home {
			home++
		}
		if m.Account == t.Attack.Account {
			victim++
			if cc == t.Attack.Country {
				victimThere++
			}
		}
	}
	s.Recipients = len(perTo)
	if s.Normal > 0 {
		s.RepeatShare /= float64(s.Normal)
		s.HomeShare = float64(home) / float64(s.Normal)
	}
	if victim > 0 {
		s.AttackCountryShare = 100 * float64(victimThere) / float64(victim)
	}
	return s
}

// countryOf is a number's calling code ("" for an invalid number).
func countryOf(number string) string {
	n, err := phone.Parse(number)
	if err != nil {
		return ""
	}
	return n.CountryCode
}
