package query

// Builders for the criteria the service writes itself (the rules of a
// domain), as opposed to the ones a client sends.

// Int is a whole-number value.
func Int(n int64) Value { return Value{Kind: KindNumber, Int: n, Num: float64(n), IsInt: true} }

// Str is a string value.
func Str(s string) Value { return Value{Kind: KindString, Str: s} }

// Bool is a boolean value.
func Bool(b bool) Value { return Value{Kind: KindBool, Bool: b} }

// Null is the null value.
func Null() Value { return Value{Kind: KindNull} }

// Equal is the condition f = v.
func Equal(f Field, v Value) *Cond { return &Cond{Field: f, Op: Eq, Values: []Value{v}} }

// NotEqual is the condition f != v.
func NotEqual(f Field, v Value) *Cond { return &Cond{Field: f, Op: Ne, Values: []Value{v}} }

// All is the conjunction of terms.
func All(terms ...Node) *And { return &And{Terms: terms} }
