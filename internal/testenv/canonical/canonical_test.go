package canonical_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"planwerk/internal/testenv/canonical"
)

// TestCanonical: RFC 8785's examples of member order, string escaping
// and number formatting (sections 3.2.2, 3.2.3 and appendix B).
func TestCanonical(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"member order by UTF-16 code units",
			`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"strings and numbers",
			`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"numbers of appendix B",
			`[0,-0,1e-7,1e-6,1e21,9007199254740992,295147905179352830000,5e-324,-1.7976931348623157e308,12.5,3600]`,
			`[0,0,1e-7,0.000001,1e+21,9007199254740992,295147905179352830000,5e-324,-1.7976931348623157e+308,12.5,3600]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := json.NewDecoder(bytes.NewReader([]byte(c.in)))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			got, err := canonical.Canonical(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	if _, err := canonical.Canonical(1.5); err == nil {
		t.Error("a float64 (not decoded with UseNumber) was taken")
	}
}
