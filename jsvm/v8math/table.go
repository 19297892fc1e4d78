package v8math

// Func1 and Func2 name a function of this package by its property on Math.
type (
	Func1 struct {
		Name string
		F    func(float64) float64
	}
	Func2 struct {
		Name string
		F    func(float64, float64) float64
	}
)

// Unary are the one-argument Math functions whose last bits V8 computes its
// own way; Binary the two-argument ones. Math's other functions (sqrt,
// floor, abs, hypot, ...) are exact or specified to the bit and need no port.
var (
	Unary = []Func1{
		{"sin", Sin}, {"cos", Cos}, {"tan", Tan},
		{"asin", Asin}, {"acos", Acos}, {"atan", Atan},
		{"exp", Exp}, {"expm1", Expm1},
		{"log", Log}, {"log1p", Log1p}, {"log2", Log2}, {"log10", Log10},
		{"sinh", Sinh}, {"cosh", Cosh}, {"tanh", Tanh},
		{"asinh", Asinh}, {"acosh", Acosh}, {"atanh", Atanh},
		{"cbrt", Cbrt},
	}
	Binary = []Func2{{"atan2", Atan2}, {"pow", Pow}}
)
