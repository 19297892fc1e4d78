// Copyright 2011 the V8 project authors. All rights reserved.
// Use of this source code is governed by a BSD-style license that can be
// found in V8's LICENSE file.
//
// Go port of DoubleToRadixCString (V8's src/numbers/conversions.cc).

package v8math

import "math"

const radixDigits = "0123456789abcdefghijklmnopqrstuvwxyz"

// FormatRadix is Number.prototype.toString(radix) as V8 computes it, for a
// radix from 2 to 36 other than 10 (which is the shortest round-trip
// decimal, as String(x)): digits up to the double's precision, rounded to
// even.
func FormatRadix(value float64, radix int) string {
	switch {
	case value != value:
		return "NaN"
	case math.IsInf(value, 1):
		return "Infinity"
	case math.IsInf(value, -1):
		return "-Infinity"
	case value == 0:
		return "0"
	}
	// The integer part is written leftwards from the middle, the fraction
	// rightwards: 1024 digits of exponent and 52 of mantissa either way, a
	// sign and a point fit.
	const bufferSize = 2200
	var buffer [bufferSize]byte
	integerCursor := bufferSize / 2
	fractionCursor := integerCursor

	negative := value < 0
	if negative {
		value = -value
	}
	integer := math.Floor(value)
	fraction := value - integer
	// Fraction digits only up to the input double's precision.
	delta := 0.5 * (math.Nextafter(value, math.Inf(1)) - value)
	delta = math.Max(math.Nextafter(0, 1), delta)
	r := float64(radix)
	if fraction >= delta {
		buffer[fractionCursor] = '.'
		fractionCursor++
		for {
			fraction *= r
			delta *= r
			digit := int(fraction)
			buffer[fractionCursor] = radixDigits[digit]
			fractionCursor++
			fraction -= float64(digit)
			// Round to even.
			if fraction > 0.5 || (fraction == 0.5 && digit&1 != 0) {
				if fraction+delta > 1 {
					// Carry into the digits already written.
					for {
						fractionCursor--
						if fractionCursor == bufferSize/2 {
							integer++
							break
						}
						c := buffer[fractionCursor]
						d := int(c - '0')
						if c > '9' {
							d = int(c-'a') + 10
						}
						if d+1 < radix {
							buffer[fractionCursor] = radixDigits[d+1]
							fractionCursor++
							break
						}
					}
					break
				}
			}
			if !(fraction >= delta) {
				break
			}
		}
	}
	// Integer digits; those below the double's precision are zeros.
	for doubleExponent(integer/r) > 0 {
		integer /= r
		integerCursor--
		buffer[integerCursor] = '0'
	}
	for {
		remainder := math.Mod(integer, r)
		integerCursor--
		buffer[integerCursor] = radixDigits[int(remainder)]
		integer = (integer - remainder) / r
		if !(integer > 0) {
			break
		}
	}
	if negative {
		integerCursor--
		buffer[integerCursor] = '-'
	}
	return string(buffer[integerCursor:fractionCursor])
}

// doubleExponent is V8's Double::Exponent: the exponent of the double as an
// integer significand times a power of two.
func doubleExponent(d float64) int {
	e := int(math.Float64bits(d)>>52) & 0x7FF
	if e == 0 {
		return -1074
	}
	return e - 1075
}
