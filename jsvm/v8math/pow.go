// ====================================================
// Copyright (C) 2004 by Sun Microsystems, Inc. All rights reserved.
//
// Permission to use, copy, modify, and distribute this
// software is freely granted, provided that this notice
// is preserved.
// ====================================================
//
// Go port of fdlibm 5.3's __ieee754_pow as V8 11.3 (Node 20) calls it for
// Math.pow and ** (V8's base::ieee754::legacy::pow; Node >= 23 calls the C
// library's pow instead).

package v8math

import "math"

// Pow is Math.pow(x, y) and x ** y.
func Pow(x, y float64) float64 {
	const (
		zero    = 0.0
		one     = 1.0
		two     = 2.0
		two53   = 9007199254740992.0
		huge    = 1.0e300
		tiny    = 1.0e-300
		L1      = 5.99999999999994648725e-01
		L2      = 4.28571428578550184252e-01
		L3      = 3.33333329818377432918e-01
		L4      = 2.72728123808534006489e-01
		L5      = 2.30660745775561754067e-01
		L6      = 2.06975017800338417784e-01
		P1      = 1.66666666666666019037e-01
		P2      = -2.77777777770155933842e-03
		P3      = 6.61375632143793436117e-05
		P4      = -1.65339022054652515390e-06
		P5      = 4.13813679705723846039e-08
		lg2     = 6.93147180559945286227e-01
		lg2H    = 6.93147182464599609375e-01
		lg2L    = -1.90465429995776804525e-09
		ovt     = 8.0085662595372944372e-17
		cp      = 9.61796693925975554329e-01
		cpH     = 9.61796700954437255859e-01
		cpL     = -7.02846165095275826516e-09
		ivln2   = 1.44269504088896338700e+00
		ivln2H  = 1.44269502162933349609e+00
		ivln2L  = 1.92596299112661746887e-08
		zeroUnd = 0.0 // tiny*tiny in C
	)
	bp := [2]float64{1.0, 1.5}
	dpH := [2]float64{0.0, 5.84962487220764160156e-01}
	dpL := [2]float64{0.0, 1.35003920212974897128e-08}

	bigInf := math.Inf(1) // huge*huge in C
	var z, ax, zH, zL, pH, pL, y1, t1, t2, r, s, t, u, v, w float64
	var i, j, k, yisint, n int32

	hx, lx := highWord(x), lowWord(x)
	hy, ly := highWord(y), lowWord(y)
	ix := hx & 0x7FFFFFFF
	iy := hy & 0x7FFFFFFF

	// y==zero: x**0 = 1
	if uint32(iy)|ly == 0 {
		return one
	}
	// +-NaN return x+y
	if ix > 0x7FF00000 || (ix == 0x7FF00000 && lx != 0) ||
		iy > 0x7FF00000 || (iy == 0x7FF00000 && ly != 0) {
		return x + y
	}
	// determine if y is an odd int when x < 0:
	// 0 not an integer, 1 odd, 2 even
	if hx < 0 {
		if iy >= 0x43400000 {
			yisint = 2
		} else if iy >= 0x3FF00000 {
			k = (iy >> 20) - 0x3FF
			if k > 20 {
				j = int32(ly >> uint(52-k))
				if uint32(j)<<uint(52-k) == ly {
					yisint = 2 - (j & 1)
				}
			} else if ly == 0 {
				j = iy >> uint(20-k)
				if j<<uint(20-k) == iy {
					yisint = 2 - (j & 1)
				}
			}
		}
	}
	// special value of y
	if ly == 0 {
		if iy == 0x7FF00000 { // y is +-inf
			if uint32(ix-0x3FF00000)|lx == 0 {
				return y - y // (+-1)**+-inf is NaN
			} else if ix >= 0x3FF00000 { // (|x|>1)**+-inf = inf,0
				if hy >= 0 {
					return y
				}
				return zero
			}
			if hy < 0 { // (|x|<1)**-,+inf = inf,0
				return -y
			}
			return zero
		}
		if iy == 0x3FF00000 { // y is +-1
			if hy < 0 {
				return one / x
			}
			return x
		}
		if hy == 0x40000000 { // y is 2
			return x * x
		}
		if hy == 0x3FE00000 { // y is 0.5
			if hx >= 0 { // x >= +0
				return math.Sqrt(x)
			}
		}
	}

	ax = math.Abs(x)
	// special value of x
	if lx == 0 {
		if ix == 0x7FF00000 || ix == 0 || ix == 0x3FF00000 {
			z = ax // x is +-0,+-inf,+-1
			if hy < 0 {
				z = one / z
			}
			if hx < 0 {
				if (ix-0x3FF00000)|yisint == 0 {
					z = (z - z) / (z - z) // (-1)**non-int is NaN
				} else if yisint == 1 {
					z = -z // (x<0)**odd = -(|x|**odd)
				}
			}
			return z
		}
	}

	n = int32((uint32(hx) >> 31) - 1)
	// (x<0)**(non-int) is NaN
	if n|yisint == 0 {
		return (x - x) / (x - x)
	}
	s = one // sign of the result: -1 for (-ve)**(odd int)
	if n|(yisint-1) == 0 {
		s = -one
	}

	// |y| is huge
	if iy > 0x41E00000 { // if |y| > 2**31
		if iy > 0x43F00000 { // if |y| > 2**64, must o/uflow
			if ix <= 0x3FEFFFFF {
				if hy < 0 {
					return bigInf
				}
				return zeroUnd
			}
			if ix >= 0x3FF00000 {
				if hy > 0 {
					return bigInf
				}
				return zeroUnd
			}
		}
		// over/underflow if x is not close to one
		if ix < 0x3FEFFFFF {
			if hy < 0 {
				return s * bigInf
			}
			return s * zeroUnd
		}
		if ix > 0x3FF00000 {
			if hy > 0 {
				return s * bigInf
			}
			return s * zeroUnd
		}
		// now |1-x| is tiny <= 2**-20, suffice to compute
		// log(x) by x-x^2/2+x^3/3-x^4/4
		t = ax - one
		w = (t * t) * (0.5 - t*(0.3333333333333333333333-t*0.25))
		u = ivln2H * t
		v = t*ivln2L - w*ivln2
		t1 = withLow(u+v, 0)
		t2 = v - (t1 - u)
	} else {
		var ss, s2, sH, sL, tH, tL float64
		n = 0
		// take care subnormal number
		if ix < 0x00100000 {
			ax *= two53
			n -= 53
			ix = highWord(ax)
		}
		n += (ix >> 20) - 0x3FF
		j = ix & 0x000FFFFF
		// determine interval
		ix = j | 0x3FF00000 // normalize ix
		if j <= 0x3988E {
			k = 0 // |x|<sqrt(3/2)
		} else if j < 0xBB67A {
			k = 1 // |x|<sqrt(3)
		} else {
			k = 0
			n++
			ix -= 0x00100000
		}
		ax = withHigh(ax, uint32(ix))

		// compute ss = sH+sL = (x-1)/(x+1) or (x-1.5)/(x+1.5)
		u = ax - bp[k]
		v = one / (ax + bp[k])
		ss = u * v
		sH = withLow(ss, 0)
		// tH=ax+bp[k] High
		tH = fromWords(uint32(((ix>>1)|0x20000000)+0x00080000+(k<<18)), 0)
		tL = ax - (tH - bp[k])
		sL = v * ((u - sH*tH) - sH*tL)
		// compute log(ax)
		s2 = ss * ss
		r = s2 * s2 * (L1 + s2*(L2+s2*(L3+s2*(L4+s2*(L5+s2*L6)))))
		r += sL * (sH + ss)
		s2 = sH * sH
		tH = withLow(3.0+s2+r, 0)
		tL = r - ((tH - 3.0) - s2)
		// u+v = ss*(1+...)
		u = sH * tH
		v = sL*tH + tL*ss
		// 2/(3log2)*(ss+...)
		pH = withLow(u+v, 0)
		pL = v - (pH - u)
		zH = cpH * pH
		zL = cpL*pH + pL*cp + dpL[k]
		// log2(ax) = (ss+..)*2/(3*log2) = n + dpH + zH + zL
		t = float64(n)
		t1 = withLow(((zH+zL)+dpH[k])+t, 0)
		t2 = zL - (((t1 - t) - dpH[k]) - zH)
	}

	// split up y into y1+y2 and compute (y1+y2)*(t1+t2)
	y1 = withLow(y, 0)
	pL = (y-y1)*t1 + y*t2
	pH = y1 * t1
	z = pL + pH
	j, i = highWord(z), int32(lowWord(z))
	if j >= 0x40900000 { // z >= 1024
		if (j-0x40900000)|i != 0 { // if z > 1024
			return s * bigInf
		}
		if pL+ovt > z-pH {
			return s * bigInf
		}
	} else if (j & 0x7FFFFFFF) >= 0x4090CC00 { // z <= -1075
		if uint32(j)-0xC090CC00|uint32(i) != 0 { // z < -1075
			return s * zeroUnd
		}
		if pL <= z-pH {
			return s * zeroUnd
		}
	}
	// compute 2**(pH+pL)
	i = j & 0x7FFFFFFF
	k = (i >> 20) - 0x3FF
	n = 0
	if i > 0x3FE00000 { // if |z| > 0.5, set n = [z+0.5]
		n = j + (0x00100000 >> uint(k+1))
		k = ((n & 0x7FFFFFFF) >> 20) - 0x3FF // new k for n
		t = fromWords(uint32(n)&^(0x000FFFFF>>uint(k)), 0)
		n = ((n & 0x000FFFFF) | 0x00100000) >> uint(20-k)
		if j < 0 {
			n = -n
		}
		pH -= t
	}
	t = withLow(pL+pH, 0)
	u = t * lg2H
	v = (pL-(t-pH))*lg2 + t*lg2L
	z = u + v
	w = v - (z - u)
	t = z * z
	t1 = z - t*(P1+t*(P2+t*(P3+t*(P4+t*P5))))
	// fdlibm has r = (z*t1)/(t1-two) - (w+z*w); V8 divides by the whole
	// difference, and its last bits are what Node prints.
	r = (z * t1) / ((t1 - two) - (w + z*w))
	z = one - (r - z)
	j = highWord(z)
	j += n << 20
	if (j >> 20) <= 0 {
		z = math.Ldexp(z, int(n)) // subnormal output
	} else {
		z = withHigh(z, uint32(j))
	}
	return s * z
}
