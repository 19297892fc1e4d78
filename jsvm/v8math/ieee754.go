// Package v8math computes Math's transcendental functions bit for bit as
// Node 20's V8 (11.3) does, so that goja and quickjs print the same
// coordinates as the node engine. It is a Go port of V8's
// src/base/ieee754.cc (fdlibm) and of the fdlibm pow that V8 11.3 calls for
// Math.pow and **.
//
// The Go port keeps the C code's order of operations; Go rounds every
// float64 operation separately on amd64 (no fused multiply-add), which is
// what Node's x64 build does too. On arm64 the Go compiler, like clang for
// Node's arm64 build, may fuse a*b+c; the two need not fuse the same
// products, so only amd64 is proven bit-identical (see the tests).
//
// ====================================================
// Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//
// Developed at SunSoft, a Sun Microsystems, Inc. business.
// Permission to use, copy, modify, and distribute this
// software is freely granted, provided that this notice
// is preserved.
// ====================================================
//
// The original source code covered by the above license above has been
// modified significantly by Google Inc.
// Copyright 2016 the V8 project authors. All rights reserved.
// Use of this source code is governed by a BSD-style license that can be
// found in V8's LICENSE file.
package v8math

import "math"

// Word access, as fdlibm's GET_HIGH_WORD and friends.
func highWord(x float64) int32 { return int32(math.Float64bits(x) >> 32) }
func lowWord(x float64) uint32 { return uint32(math.Float64bits(x)) }
func fromWords(hi, lo uint32) float64 {
	return math.Float64frombits(uint64(hi)<<32 | uint64(lo))
}
func withHigh(x float64, hi uint32) float64 { return fromWords(hi, lowWord(x)) }
func withLow(x float64, lo uint32) float64  { return fromWords(uint32(highWord(x)), lo) }

var nan = math.NaN()

// remPio2 returns n and y0+y1 = x - n*pi/2 (fdlibm __ieee754_rem_pio2).
func remPio2(x float64) (int32, float64, float64) {
	const (
		zero    = 0.0
		half    = 5.00000000000000000000e-01
		two24   = 1.67772160000000000000e+07
		invpio2 = 6.36619772367581382433e-01
		pio2_1  = 1.57079632673412561417e+00
		pio2_1t = 6.07710050650619224932e-11
		pio2_2  = 6.07710050630396597660e-11
		pio2_2t = 2.02226624879595063154e-21
		pio2_3  = 2.02226624871116645580e-21
		pio2_3t = 8.47842766036889956997e-32
	)
	var y0, y1 float64
	hx := highWord(x)
	ix := hx & 0x7FFFFFFF
	if ix <= 0x3FE921FB {
		return 0, x, 0
	}
	if ix < 0x4002D97C {
		if hx > 0 {
			z := x - pio2_1
			if ix != 0x3FF921FB {
				y0 = z - pio2_1t
				y1 = (z - y0) - pio2_1t
			} else {
				z -= pio2_2
				y0 = z - pio2_2t
				y1 = (z - y0) - pio2_2t
			}
			return 1, y0, y1
		}
		z := x + pio2_1
		if ix != 0x3FF921FB {
			y0 = z + pio2_1t
			y1 = (z - y0) + pio2_1t
		} else {
			z += pio2_2
			y0 = z + pio2_2t
			y1 = (z - y0) + pio2_2t
		}
		return -1, y0, y1
	}
	if ix <= 0x413921FB {
		t := math.Abs(x)
		n := int32(t*invpio2 + half)
		fn := float64(n)
		r := t - fn*pio2_1
		w := fn * pio2_1t
		if n < 32 && ix != npio2hw[n-1] {
			y0 = r - w
		} else {
			j := ix >> 20
			y0 = r - w
			i := j - ((highWord(y0) >> 20) & 0x7FF)
			if i > 16 {
				t = r
				w = fn * pio2_2
				r = t - w
				w = fn*pio2_2t - ((t - r) - w)
				y0 = r - w
				i = j - ((highWord(y0) >> 20) & 0x7FF)
				if i > 49 {
					t = r
					w = fn * pio2_3
					r = t - w
					w = fn*pio2_3t - ((t - r) - w)
					y0 = r - w
				}
			}
		}
		y1 = (r - y0) - w
		if hx < 0 {
			return -n, -y0, -y1
		}
		return n, y0, y1
	}
	if ix >= 0x7FF00000 {
		return 0, x - x, x - x
	}
	// z = scalbn(|x|, ilogb(x)-23)
	e0 := (ix >> 20) - 1046
	z := fromWords(uint32(ix-int32(uint32(e0)<<20)), lowWord(x))
	var tx [3]float64
	for i := 0; i < 2; i++ {
		tx[i] = float64(int32(z))
		z = (z - tx[i]) * two24
	}
	tx[2] = z
	nx := 3
	for tx[nx-1] == zero {
		nx--
	}
	var y [3]float64
	n := kernelRemPio2(tx[:nx], y[:], int(e0), nx, 2)
	if hx < 0 {
		return int32(-n), -y[0], -y[1]
	}
	return int32(n), y[0], y[1]
}

var twoOverPi = [...]int32{
	0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C,
	0x439041, 0xFE5163, 0xABDEBB, 0xC561B7, 0x246E3A, 0x424DD2, 0xE00649,
	0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129, 0xA73EE8, 0x8235F5, 0x2EBB44,
	0x84E99C, 0x7026B4, 0x5F7E41, 0x3991D6, 0x398353, 0x39F49C, 0x845F8B,
	0xBDF928, 0x3B1FF8, 0x97FFDE, 0x05980F, 0xEF2F11, 0x8B5A0A, 0x6D1F6D,
	0x367ECF, 0x27CB09, 0xB74F46, 0x3F669E, 0x5FEA2D, 0x7527BA, 0xC7EBE5,
	0xF17B3D, 0x0739F7, 0x8A5292, 0xEA6BFB, 0x5FB11F, 0x8D5D08, 0x560330,
	0x46FC7B, 0x6BABF0, 0xCFBC20, 0x9AF436, 0x1DA9E3, 0x91615E, 0xE61B08,
	0x659985, 0x5F14A0, 0x68408D, 0xFFD880, 0x4D7327, 0x310606, 0x1556CA,
	0x73A8C9, 0x60E27B, 0xC08C6B,
}

var npio2hw = [...]int32{
	0x3FF921FB, 0x400921FB, 0x4012D97C, 0x401921FB, 0x401F6A7A, 0x4022D97C,
	0x4025FDBB, 0x402921FB, 0x402C463A, 0x402F6A7A, 0x4031475C, 0x4032D97C,
	0x40346B9C, 0x4035FDBB, 0x40378FDB, 0x403921FB, 0x403AB41B, 0x403C463A,
	0x403DD85A, 0x403F6A7A, 0x40407E4C, 0x4041475C, 0x4042106C, 0x4042D97C,
	0x4043A28C, 0x40446B9C, 0x404534AC, 0x4045FDBB, 0x4046C6CB, 0x40478FDB,
	0x404858EB, 0x404921FB,
}

var pio2Chunks = [...]float64{
	1.57079625129699707031e+00,
	7.54978941586159635335e-08,
	5.39030252995776476554e-15,
	3.28200341580791294123e-22,
	1.27065575308067607349e-29,
	1.22933308981111328932e-36,
	2.73370053816464559624e-44,
	2.16741683877804819444e-51,
}

// kernelRemPio2 is fdlibm's __kernel_rem_pio2 for prec 2 (what
// __ieee754_rem_pio2 asks for).
func kernelRemPio2(x, y []float64, e0, nx, prec int) int {
	const (
		two24  = 1.67772160000000000000e+07
		twon24 = 5.96046447753906250000e-08
	)
	initJk := [...]int{2, 3, 4, 6}
	var iq [20]int32
	var f, fq, q [20]float64
	var z, fw float64
	jk := initJk[prec]
	jp := jk
	jx := nx - 1
	jv := (e0 - 3) / 24
	if jv < 0 {
		jv = 0
	}
	q0 := e0 - 24*(jv+1)
	j := jv - jx
	m := jx + jk
	for i := 0; i <= m; i, j = i+1, j+1 {
		if j < 0 {
			f[i] = 0
		} else {
			f[i] = float64(twoOverPi[j])
		}
	}
	for i := 0; i <= jk; i++ {
		fw = 0
		for j := 0; j <= jx; j++ {
			fw += x[j] * f[jx+i-j]
		}
		q[i] = fw
	}
	jz := jk
	var n, ih int32
	for {
		// distill q[] into iq[] reversingly
		i := 0
		z = q[jz]
		for j := jz; j > 0; i, j = i+1, j-1 {
			fw = float64(int32(twon24 * z))
			iq[i] = int32(z - two24*fw)
			z = q[j-1] + fw
		}
		z = math.Ldexp(z, q0)
		z -= 8.0 * math.Floor(z*0.125)
		n = int32(z)
		z -= float64(n)
		ih = 0
		if q0 > 0 {
			i := iq[jz-1] >> (24 - q0)
			n += i
			iq[jz-1] -= i << (24 - q0)
			ih = iq[jz-1] >> (23 - q0)
		} else if q0 == 0 {
			ih = iq[jz-1] >> 23
		} else if z >= 0.5 {
			ih = 2
		}
		if ih > 0 {
			n++
			carry := int32(0)
			for i := 0; i < jz; i++ {
				j := iq[i]
				if carry == 0 {
					if j != 0 {
						carry = 1
						iq[i] = 0x1000000 - j
					}
				} else {
					iq[i] = 0xFFFFFF - j
				}
			}
			if q0 > 0 {
				switch q0 {
				case 1:
					iq[jz-1] &= 0x7FFFFF
				case 2:
					iq[jz-1] &= 0x3FFFFF
				}
			}
			if ih == 2 {
				z = 1 - z
				if carry != 0 {
					z -= math.Ldexp(1, q0)
				}
			}
		}
		if z == 0 {
			j := int32(0)
			for i := jz - 1; i >= jk; i-- {
				j |= iq[i]
			}
			if j == 0 {
				k := 1
				for ; jk >= k && iq[jk-k] == 0; k++ {
				}
				for i := jz + 1; i <= jz+k; i++ {
					f[jx+i] = float64(twoOverPi[jv+i])
					fw = 0
					for j := 0; j <= jx; j++ {
						fw += x[j] * f[jx+i-j]
					}
					q[i] = fw
				}
				jz += k
				continue
			}
		}
		break
	}
	if z == 0 {
		jz--
		q0 -= 24
		for iq[jz] == 0 {
			jz--
			q0 -= 24
		}
	} else {
		z = math.Ldexp(z, -q0)
		if z >= two24 {
			fw = float64(int32(twon24 * z))
			iq[jz] = int32(z - two24*fw)
			jz++
			q0 += 24
			iq[jz] = int32(fw)
		} else {
			iq[jz] = int32(z)
		}
	}
	fw = math.Ldexp(1, q0)
	for i := jz; i >= 0; i-- {
		q[i] = fw * float64(iq[i])
		fw *= twon24
	}
	for i := jz; i >= 0; i-- {
		fw = 0
		for k := 0; k <= jp && k <= jz-i; k++ {
			fw += pio2Chunks[k] * q[i+k]
		}
		fq[jz-i] = fw
	}
	// prec 1 and 2
	fw = 0
	for i := jz; i >= 0; i-- {
		fw += fq[i]
	}
	if ih == 0 {
		y[0] = fw
	} else {
		y[0] = -fw
	}
	fw = fq[0] - fw
	for i := 1; i <= jz; i++ {
		fw += fq[i]
	}
	if ih == 0 {
		y[1] = fw
	} else {
		y[1] = -fw
	}
	return int(n & 7)
}

func kernelCos(x, y float64) float64 {
	const (
		one = 1.0
		C1  = 4.16666666666666019037e-02
		C2  = -1.38888888888741095749e-03
		C3  = 2.48015872894767294178e-05
		C4  = -2.75573143513906633035e-07
		C5  = 2.08757232129817482790e-09
		C6  = -1.13596475577881948265e-11
	)
	ix := highWord(x) & 0x7FFFFFFF
	if ix < 0x3E400000 {
		if int32(x) == 0 {
			return one
		}
	}
	z := x * x
	r := z * (C1 + z*(C2+z*(C3+z*(C4+z*(C5+z*C6)))))
	if ix < 0x3FD33333 {
		return one - (0.5*z - (z*r - x*y))
	}
	var qx float64
	if ix > 0x3FE90000 {
		qx = 0.28125
	} else {
		qx = fromWords(uint32(ix-0x00200000), 0)
	}
	iz := 0.5*z - qx
	a := one - qx
	return a - (iz - (z*r - x*y))
}

func kernelSin(x, y float64, iy int) float64 {
	const (
		half = 5.00000000000000000000e-01
		S1   = -1.66666666666666324348e-01
		S2   = 8.33333333332248946124e-03
		S3   = -1.98412698298579493134e-04
		S4   = 2.75573137070700676789e-06
		S5   = -2.50507602534068634195e-08
		S6   = 1.58969099521155010221e-10
	)
	ix := highWord(x) & 0x7FFFFFFF
	if ix < 0x3E400000 {
		if int32(x) == 0 {
			return x
		}
	}
	z := x * x
	v := z * x
	r := S2 + z*(S3+z*(S4+z*(S5+z*S6)))
	if iy == 0 {
		return x + v*(S1+z*r)
	}
	return x - ((z*(half*y-v*r) - y) - v*S1)
}

var tanT = [...]float64{
	3.33333333333334091986e-01,
	1.33333333333201242699e-01,
	5.39682539762260521377e-02,
	2.18694882948595424599e-02,
	8.86323982359930005737e-03,
	3.59207910759131235356e-03,
	1.45620945432529025516e-03,
	5.88041240820264096874e-04,
	2.46463134818469906812e-04,
	7.81794442939557092300e-05,
	7.14072491382608190305e-05,
	-1.85586374855275456654e-05,
	2.59073051863633712884e-05,
}

func kernelTan(x, y float64, iy int) float64 {
	const (
		one    = 1.0
		pio4   = 7.85398163397448278999e-01
		pio4lo = 3.06161699786838301793e-17
	)
	T := &tanT
	var z, r, v, w, s float64
	hx := highWord(x)
	ix := hx & 0x7FFFFFFF
	if ix < 0x3E300000 {
		if int32(x) == 0 {
			low := lowWord(x)
			if (uint32(ix)|low)|uint32(iy+1) == 0 {
				return one / math.Abs(x)
			} else if iy == 1 {
				return x
			} else {
				w = x + y
				z = withLow(w, 0)
				v = y - (z - x)
				a := -one / w
				t := withLow(a, 0)
				s = one + t*z
				return t + a*(s+t*v)
			}
		}
	}
	if ix >= 0x3FE59428 {
		if hx < 0 {
			x = -x
			y = -y
		}
		z = pio4 - x
		w = pio4lo - y
		x = z + w
		y = 0.0
	}
	z = x * x
	w = z * z
	r = T[1] + w*(T[3]+w*(T[5]+w*(T[7]+w*(T[9]+w*T[11]))))
	v = z * (T[2] + w*(T[4]+w*(T[6]+w*(T[8]+w*(T[10]+w*T[12])))))
	s = z * x
	r = y + z*(s*(r+v)+y)
	r += T[0] * s
	w = x + r
	if ix >= 0x3FE59428 {
		v = float64(iy)
		return float64(1-((hx>>30)&2)) * (v - 2.0*(x-(w*w/(w+v)-r)))
	}
	if iy == 1 {
		return w
	}
	z = withLow(w, 0)
	v = r - (z - x)
	a := -1.0 / w
	t := withLow(a, 0)
	s = 1.0 + t*z
	return t + a*(s+t*v)
}

// Sin is Math.sin.
func Sin(x float64) float64 {
	ix := highWord(x) & 0x7FFFFFFF
	if ix <= 0x3FE921FB {
		return kernelSin(x, 0, 0)
	} else if ix >= 0x7FF00000 {
		return x - x
	}
	n, y0, y1 := remPio2(x)
	switch n & 3 {
	case 0:
		return kernelSin(y0, y1, 1)
	case 1:
		return kernelCos(y0, y1)
	case 2:
		return -kernelSin(y0, y1, 1)
	default:
		return -kernelCos(y0, y1)
	}
}

// Cos is Math.cos.
func Cos(x float64) float64 {
	ix := highWord(x) & 0x7FFFFFFF
	if ix <= 0x3FE921FB {
		return kernelCos(x, 0)
	} else if ix >= 0x7FF00000 {
		return x - x
	}
	n, y0, y1 := remPio2(x)
	switch n & 3 {
	case 0:
		return kernelCos(y0, y1)
	case 1:
		return -kernelSin(y0, y1, 1)
	case 2:
		return -kernelCos(y0, y1)
	default:
		return kernelSin(y0, y1, 1)
	}
}

// Tan is Math.tan.
func Tan(x float64) float64 {
	ix := highWord(x) & 0x7FFFFFFF
	if ix <= 0x3FE921FB {
		return kernelTan(x, 0, 1)
	} else if ix >= 0x7FF00000 {
		return x - x
	}
	n, y0, y1 := remPio2(x)
	return kernelTan(y0, y1, int(1-((n&1)<<1)))
}

const (
	pS0 = 1.66666666666666657415e-01
	pS1 = -3.25565818622400915405e-01
	pS2 = 2.01212532134862925881e-01
	pS3 = -4.00555345006794114027e-02
	pS4 = 7.91534994289814532176e-04
	pS5 = 3.47933107596021167570e-05
	qS1 = -2.40339491173441421878e+00
	qS2 = 2.02094576023350569471e+00
	qS3 = -6.88283971605453293030e-01
	qS4 = 7.70381505559019352791e-02

	pio2Hi = 1.57079632679489655800e+00
	pio2Lo = 6.12323399573676603587e-17
	pio4Hi = 7.85398163397448278999e-01
)

// Acos is Math.acos.
func Acos(x float64) float64 {
	const pi = 3.14159265358979311600e+00
	hx := highWord(x)
	ix := hx & 0x7FFFFFFF
	if ix >= 0x3FF00000 {
		if uint32(ix-0x3FF00000)|lowWord(x) == 0 {
			if hx > 0 {
				return 0.0
			}
			return pi + 2.0*pio2Lo
		}
		return nan
	}
	if ix < 0x3FE00000 {
		if ix <= 0x3C600000 {
			return pio2Hi + pio2Lo
		}
		z := x * x
		p := z * (pS0 + z*(pS1+z*(pS2+z*(pS3+z*(pS4+z*pS5)))))
		q := 1.0 + z*(qS1+z*(qS2+z*(qS3+z*qS4)))
		r := p / q
		return pio2Hi - (x - (pio2Lo - x*r))
	} else if hx < 0 {
		z := (1.0 + x) * 0.5
		p := z * (pS0 + z*(pS1+z*(pS2+z*(pS3+z*(pS4+z*pS5)))))
		q := 1.0 + z*(qS1+z*(qS2+z*(qS3+z*qS4)))
		s := math.Sqrt(z)
		r := p / q
		w := r*s - pio2Lo
		return pi - 2.0*(s+w)
	}
	z := (1.0 - x) * 0.5
	s := math.Sqrt(z)
	df := withLow(s, 0)
	c := (z - df*df) / (s + df)
	p := z * (pS0 + z*(pS1+z*(pS2+z*(pS3+z*(pS4+z*pS5)))))
	q := 1.0 + z*(qS1+z*(qS2+z*(qS3+z*qS4)))
	r := p / q
	w := r*s + c
	return 2.0 * (df + w)
}

// Asin is Math.asin.
func Asin(x float64) float64 {
	const huge = 1.000e+300
	var t, w, p, q float64
	hx := highWord(x)
	ix := hx & 0x7FFFFFFF
	if ix >= 0x3FF00000 {
		if uint32(ix-0x3FF00000)|lowWord(x) == 0 {
			return x*pio2Hi + x*pio2Lo
		}
		return nan
	} else if ix < 0x3FE00000 {
		if ix < 0x3E400000 {
			if huge+x > 1.0 {
				return x
			}
		} else {
			t = x * x
		}
		p = t * (pS0 + t*(pS1+t*(pS2+t*(pS3+t*(pS4+t*pS5)))))
		q = 1.0 + t*(qS1+t*(qS2+t*(qS3+t*qS4)))
		w = p / q
		return x + x*w
	}
	w = 1.0 - math.Abs(x)
	t = w * 0.5
	p = t * (pS0 + t*(pS1+t*(pS2+t*(pS3+t*(pS4+t*pS5)))))
	q = 1.0 + t*(qS1+t*(qS2+t*(qS3+t*qS4)))
	s := math.Sqrt(t)
	if ix >= 0x3FEF3333 {
		w = p / q
		t = pio2Hi - (2.0*(s+s*w) - pio2Lo)
	} else {
		w = withLow(s, 0)
		c := (t - w*w) / (s + w)
		r := p / q
		p = 2.0*s*r - (pio2Lo - 2.0*c)
		q = pio4Hi - 2.0*w
		t = pio4Hi - (p - q)
	}
	if hx > 0 {
		return t
	}
	return -t
}

const ln2 = 6.93147180559945286227e-01

// Acosh is Math.acosh.
func Acosh(x float64) float64 {
	hx := highWord(x)
	lx := lowWord(x)
	if hx < 0x3FF00000 {
		return nan
	} else if hx >= 0x41B00000 {
		if hx >= 0x7FF00000 {
			return x + x
		}
		return Log(x) + ln2
	} else if uint32(hx-0x3FF00000)|lx == 0 {
		return 0.0
	} else if hx > 0x40000000 {
		t := x * x
		return Log(2.0*x - 1.0/(x+math.Sqrt(t-1.0)))
	}
	t := x - 1.0
	return Log1p(t + math.Sqrt(2.0*t+t*t))
}

// Asinh is Math.asinh.
func Asinh(x float64) float64 {
	const huge = 1.0e300
	var w float64
	hx := highWord(x)
	ix := hx & 0x7FFFFFFF
	if ix >= 0x7FF00000 {
		return x + x
	}
	if ix < 0x3E300000 {
		if huge+x > 1.0 {
			return x
		}
	}
	if ix > 0x41B00000 {
		w = Log(math.Abs(x)) + ln2
	} else if ix > 0x40000000 {
		t := math.Abs(x)
		w = Log(2.0*t + 1.0/(math.Sqrt(x*x+1.0)+t))
	} else {
		t := x * x
		w = Log1p(math.Abs(x) + t/(1.0+math.Sqrt(1.0+t)))
	}
	if hx > 0 {
		return w
	}
	return -w
}

var atanHi = [...]float64{
	4.63647609000806093515e-01,
	7.85398163397448278999e-01,
	9.82793723247329054082e-01,
	1.57079632679489655800e+00,
}

var atanLo = [...]float64{
	2.26987774529616870924e-17,
	3.06161699786838301793e-17,
	1.39033110312309984516e-17,
	6.12323399573676603587e-17,
}

var aT = [...]float64{
	3.33333333333329318027e-01,
	-1.99999999998764832476e-01,
	1.42857142725034663711e-01,
	-1.11111104054623557880e-01,
	9.09088713343650656196e-02,
	-7.69187620504482999495e-02,
	6.66107313738753120669e-02,
	-5.83357013379057348645e-02,
	4.97687799461593236017e-02,
	-3.65315727442169155270e-02,
	1.62858201153657823623e-02,
}

// Atan is Math.atan.
func Atan(x float64) float64 {
	const huge = 1.0e300
	var id int
	hx := highWord(x)
	ix := hx & 0x7FFFFFFF
	if ix >= 0x44100000 {
		low := lowWord(x)
		if ix > 0x7FF00000 || (ix == 0x7FF00000 && low != 0) {
			return x + x
		}
		if hx > 0 {
			return atanHi[3] + atanLo[3]
		}
		return -atanHi[3] - atanLo[3]
	}
	if ix < 0x3FDC0000 {
		if ix < 0x3E400000 {
			if huge+x > 1.0 {
				return x
			}
		}
		id = -1
	} else {
		x = math.Abs(x)
		if ix < 0x3FF30000 {
			if ix < 0x3FE60000 {
				id = 0
				x = (2.0*x - 1.0) / (2.0 + x)
			} else {
				id = 1
				x = (x - 1.0) / (x + 1.0)
			}
		} else {
			if ix < 0x40038000 {
				id = 2
				x = (x - 1.5) / (1.0 + 1.5*x)
			} else {
				id = 3
				x = -1.0 / x
			}
		}
	}
	z := x * x
	w := z * z
	s1 := z * (aT[0] + w*(aT[2]+w*(aT[4]+w*(aT[6]+w*(aT[8]+w*aT[10])))))
	s2 := w * (aT[1] + w*(aT[3]+w*(aT[5]+w*(aT[7]+w*aT[9]))))
	if id < 0 {
		return x - x*(s1+s2)
	}
	z = atanHi[id] - ((x*(s1+s2) - atanLo[id]) - x)
	if hx < 0 {
		return -z
	}
	return z
}

// Atan2 is Math.atan2(y, x).
func Atan2(y, x float64) float64 {
	const (
		tiny = 1.0e-300
		piO4 = 7.8539816339744827900e-01
		piO2 = 1.5707963267948965580e+00
		pi   = 3.1415926535897931160e+00
		piLo = 1.2246467991473531772e-16
		zero = 0.0
	)
	hx, lx := highWord(x), lowWord(x)
	ix := hx & 0x7FFFFFFF
	hy, ly := highWord(y), lowWord(y)
	iy := hy & 0x7FFFFFFF
	if uint32(ix)|((lx|-lx)>>31) > 0x7FF00000 || uint32(iy)|((ly|-ly)>>31) > 0x7FF00000 {
		return x + y
	}
	if uint32(hx-0x3FF00000)|lx == 0 {
		return Atan(y)
	}
	m := ((hy >> 31) & 1) | ((hx >> 30) & 2)
	if uint32(iy)|ly == 0 {
		switch m {
		case 0, 1:
			return y
		case 2:
			return pi + tiny
		default:
			return -pi - tiny
		}
	}
	if uint32(ix)|lx == 0 {
		if hy < 0 {
			return -piO2 - tiny
		}
		return piO2 + tiny
	}
	if ix == 0x7FF00000 {
		if iy == 0x7FF00000 {
			switch m {
			case 0:
				return piO4 + tiny
			case 1:
				return -piO4 - tiny
			case 2:
				return 3.0*piO4 + tiny
			default:
				return -3.0*piO4 - tiny
			}
		}
		switch m {
		case 0:
			return zero
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return pi + tiny
		default:
			return -pi - tiny
		}
	}
	if iy == 0x7FF00000 {
		if hy < 0 {
			return -piO2 - tiny
		}
		return piO2 + tiny
	}
	var z float64
	k := (iy - ix) >> 20
	if k > 60 {
		z = piO2 + 0.5*piLo
		m &= 1
	} else if hx < 0 && k < -60 {
		z = 0.0
	} else {
		z = Atan(math.Abs(y / x))
	}
	switch m {
	case 0:
		return z
	case 1:
		return -z
	case 2:
		return pi - (z - piLo)
	default:
		return (z - piLo) - pi
	}
}

const (
	ln2Hi  = 6.93147180369123816490e-01
	ln2Lo  = 1.90821492927058770002e-10
	invln2 = 1.44269504088896338700e+00
)

// Exp is Math.exp.
func Exp(x float64) float64 {
	const (
		oThreshold = 7.09782712893383973096e+02
		uThreshold = -7.45133219101941108420e+02
		P1         = 1.66666666666666019037e-01
		P2         = -2.77777777770155933842e-03
		P3         = 6.61375632143793436117e-05
		P4         = -1.65339022054652515390e-06
		P5         = 4.13813679705723846039e-08
		E          = 2.718281828459045
		twom1000   = 9.33263618503218878990e-302
		two1023    = 8.988465674311579539e307
	)
	halF := [2]float64{0.5, -0.5}
	ln2HI := [2]float64{ln2Hi, -ln2Hi}
	ln2LO := [2]float64{ln2Lo, -ln2Lo}
	var hi, lo, twopk float64
	var k int32
	hx := uint32(highWord(x))
	xsb := int32((hx >> 31) & 1)
	hx &= 0x7FFFFFFF
	if hx >= 0x40862E42 {
		if hx >= 0x7FF00000 {
			if (hx&0xFFFFF)|lowWord(x) != 0 {
				return x + x
			}
			if xsb == 0 {
				return x
			}
			return 0.0
		}
		if x > oThreshold {
			return math.Inf(1)
		}
		if x < uThreshold {
			return 0
		}
	}
	if hx > 0x3FD62E42 {
		if hx < 0x3FF0A2B2 {
			if x == 1.0 {
				return E
			}
			hi = x - ln2HI[xsb]
			lo = ln2LO[xsb]
			k = 1 - xsb - xsb
		} else {
			k = int32(invln2*x + halF[xsb])
			t := float64(k)
			hi = x - t*ln2HI[0]
			lo = t * ln2LO[0]
		}
		x = hi - lo
	} else if hx < 0x3E300000 {
		if 1.0e300+x > 1.0 {
			return 1.0 + x
		}
	} else {
		k = 0
	}
	t := x * x
	if k >= -1021 {
		twopk = fromWords(uint32(0x3FF00000+int32(uint32(k)<<20)), 0)
	} else {
		twopk = fromWords(0x3FF00000+(uint32(k+1000)<<20), 0)
	}
	c := x - t*(P1+t*(P2+t*(P3+t*(P4+t*P5))))
	if k == 0 {
		return 1.0 - ((x*c)/(c-2.0) - x)
	}
	y := 1.0 - ((lo - (x*c)/(2.0-c)) - hi)
	if k >= -1021 {
		if k == 1024 {
			return y * 2.0 * two1023
		}
		return y * twopk
	}
	return y * twopk * twom1000
}

// Atanh is Math.atanh.
func Atanh(x float64) float64 {
	var t float64
	hx, lx := highWord(x), lowWord(x)
	ix := hx & 0x7FFFFFFF
	if uint32(ix)|((lx|-lx)>>31) > 0x3FF00000 {
		return nan
	}
	if ix == 0x3FF00000 {
		if x > 0 {
			return math.Inf(1)
		}
		return math.Inf(-1)
	}
	if ix < 0x3E300000 && (1e300+x) > 0 {
		return x
	}
	x = withHigh(x, uint32(ix))
	if ix < 0x3FE00000 {
		t = x + x
		t = 0.5 * Log1p(t+t*x/(1.0-x))
	} else {
		t = 0.5 * Log1p((x+x)/(1.0-x))
	}
	if hx >= 0 {
		return t
	}
	return -t
}

const (
	lg1 = 6.666666666666735130e-01
	lg2 = 3.999999999940941908e-01
	lg3 = 2.857142874366239149e-01
	lg4 = 2.222219843214978396e-01
	lg5 = 1.818357216161805012e-01
	lg6 = 1.531383769920937332e-01
	lg7 = 1.479819860511658591e-01

	two54 = 1.80143985094819840000e+16
)

// Log is Math.log.
func Log(x float64) float64 {
	var hfsq, f, s, z, R, w, t1, t2, dk float64
	hx, lx := highWord(x), lowWord(x)
	k := int32(0)
	if hx < 0x00100000 {
		if uint32(hx&0x7FFFFFFF)|lx == 0 {
			return math.Inf(-1)
		}
		if hx < 0 {
			return nan
		}
		k -= 54
		x *= two54
		hx = highWord(x)
	}
	if hx >= 0x7FF00000 {
		return x + x
	}
	k += (hx >> 20) - 1023
	hx &= 0x000FFFFF
	i := (hx + 0x95F64) & 0x100000
	x = withHigh(x, uint32(hx|(i^0x3FF00000)))
	k += i >> 20
	f = x - 1.0
	if (0x000FFFFF & (2 + hx)) < 3 {
		if f == 0 {
			if k == 0 {
				return 0
			}
			dk = float64(k)
			return dk*ln2Hi + dk*ln2Lo
		}
		R = f * f * (0.5 - 0.33333333333333333*f)
		if k == 0 {
			return f - R
		}
		dk = float64(k)
		return dk*ln2Hi - ((R - dk*ln2Lo) - f)
	}
	s = f / (2.0 + f)
	dk = float64(k)
	z = s * s
	i = hx - 0x6147A
	w = z * z
	j := 0x6B851 - hx
	t1 = w * (lg2 + w*(lg4+w*lg6))
	t2 = z * (lg1 + w*(lg3+w*(lg5+w*lg7)))
	i |= j
	R = t2 + t1
	if i > 0 {
		hfsq = 0.5 * f * f
		if k == 0 {
			return f - (hfsq - s*(hfsq+R))
		}
		return dk*ln2Hi - ((hfsq - (s*(hfsq+R) + dk*ln2Lo)) - f)
	}
	if k == 0 {
		return f - s*(f-R)
	}
	return dk*ln2Hi - ((s*(f-R) - dk*ln2Lo) - f)
}

// Log1p is Math.log1p.
func Log1p(x float64) float64 {
	const (
		Lp1 = lg1
		Lp2 = lg2
		Lp3 = lg3
		Lp4 = lg4
		Lp5 = lg5
		Lp6 = lg6
		Lp7 = lg7
	)
	var hfsq, f, c, s, z, R, u float64
	var hu int32
	hx := highWord(x)
	ax := hx & 0x7FFFFFFF
	k := int32(1)
	if hx < 0x3FDA827A {
		if ax >= 0x3FF00000 {
			if x == -1.0 {
				return math.Inf(-1)
			}
			return nan
		}
		if ax < 0x3E200000 {
			if two54+x > 0 && ax < 0x3C900000 {
				return x
			}
			return x - x*x*0.5
		}
		if hx > 0 || hx <= int32(-1076707644) { // 0xBFD2BEC4
			k = 0
			f = x
			hu = 1
		}
	}
	if hx >= 0x7FF00000 {
		return x + x
	}
	if k != 0 {
		if hx < 0x43400000 {
			u = 1.0 + x
			hu = highWord(u)
			k = (hu >> 20) - 1023
			if k > 0 {
				c = 1.0 - (u - x)
			} else {
				c = x - (u - 1.0)
			}
			c /= u
		} else {
			u = x
			hu = highWord(u)
			k = (hu >> 20) - 1023
			c = 0
		}
		hu &= 0x000FFFFF
		if hu < 0x6A09E {
			u = withHigh(u, uint32(hu|0x3FF00000))
		} else {
			k++
			u = withHigh(u, uint32(hu|0x3FE00000))
			hu = (0x00100000 - hu) >> 2
		}
		f = u - 1.0
	}
	hfsq = 0.5 * f * f
	dk := float64(k)
	if hu == 0 {
		if f == 0 {
			if k == 0 {
				return 0
			}
			c += dk * ln2Lo
			return dk*ln2Hi + c
		}
		R = hfsq * (1.0 - 0.66666666666666666*f)
		if k == 0 {
			return f - R
		}
		return dk*ln2Hi - ((R - (dk*ln2Lo + c)) - f)
	}
	s = f / (2.0 + f)
	z = s * s
	R = z * (Lp1 + z*(Lp2+z*(Lp3+z*(Lp4+z*(Lp5+z*(Lp6+z*Lp7))))))
	if k == 0 {
		return f - (hfsq - s*(hfsq+R))
	}
	return dk*ln2Hi - ((hfsq - (s*(hfsq+R) + (dk*ln2Lo + c))) - f)
}

func kLog1p(f float64) float64 {
	s := f / (2.0 + f)
	z := s * s
	w := z * z
	t1 := w * (lg2 + w*(lg4+w*lg6))
	t2 := z * (lg1 + w*(lg3+w*(lg5+w*lg7)))
	R := t2 + t1
	hfsq := 0.5 * f * f
	return s * (hfsq + R)
}

// Log2 is Math.log2.
func Log2(x float64) float64 {
	const (
		ivln2hi = 1.44269504072144627571e+00
		ivln2lo = 1.67517131648865118353e-10
	)
	hx, lx := highWord(x), lowWord(x)
	k := int32(0)
	if hx < 0x00100000 {
		if uint32(hx&0x7FFFFFFF)|lx == 0 {
			return math.Inf(-1)
		}
		if hx < 0 {
			return nan
		}
		k -= 54
		x *= two54
		hx = highWord(x)
	}
	if hx >= 0x7FF00000 {
		return x + x
	}
	if hx == 0x3FF00000 && lx == 0 {
		return 0
	}
	k += (hx >> 20) - 1023
	hx &= 0x000FFFFF
	i := (hx + 0x95F64) & 0x100000
	x = withHigh(x, uint32(hx|(i^0x3FF00000)))
	k += i >> 20
	y := float64(k)
	f := x - 1.0
	hfsq := 0.5 * f * f
	r := kLog1p(f)
	hi := withLow(f-hfsq, 0)
	lo := (f - hi) - hfsq + r
	valHi := hi * ivln2hi
	valLo := (lo+hi)*ivln2lo + lo*ivln2hi
	w := y + valHi
	valLo += (y - w) + valHi
	valHi = w
	return valLo + valHi
}

// Log10 is Math.log10.
func Log10(x float64) float64 {
	const (
		ivln10    = 4.34294481903251816668e-01
		log10_2hi = 3.01029995663611771306e-01
		log10_2lo = 3.69423907715893078616e-13
	)
	hx, lx := highWord(x), lowWord(x)
	k := int32(0)
	if hx < 0x00100000 {
		if uint32(hx&0x7FFFFFFF)|lx == 0 {
			return math.Inf(-1)
		}
		if hx < 0 {
			return nan
		}
		k -= 54
		x *= two54
		hx, lx = highWord(x), lowWord(x)
	}
	if hx >= 0x7FF00000 {
		return x + x
	}
	if hx == 0x3FF00000 && lx == 0 {
		return 0
	}
	k += (hx >> 20) - 1023
	i := int32((uint32(k) & 0x80000000) >> 31)
	hx = (hx & 0x000FFFFF) | ((0x3FF - i) << 20)
	y := float64(k + i)
	x = fromWords(uint32(hx), lx)
	z := y*log10_2lo + ivln10*Log(x)
	return z + y*log10_2hi
}

// Expm1 is Math.expm1.
func Expm1(x float64) float64 {
	const (
		oThreshold = 7.09782712893383973096e+02
		tiny       = 1.0e-300
		huge       = 1.0e+300
		Q1         = -3.33333333333331316428e-02
		Q2         = 1.58730158725481460165e-03
		Q3         = -7.93650757867487942473e-05
		Q4         = 4.00821782732936239552e-06
		Q5         = -2.01099218183624371326e-07
	)
	var y, hi, lo, c, t, e, hxs, hfx, r1, twopk float64
	var k int32
	hx := uint32(highWord(x))
	xsb := hx & 0x80000000
	hx &= 0x7FFFFFFF
	if hx >= 0x4043687A {
		if hx >= 0x40862E42 {
			if hx >= 0x7FF00000 {
				if (hx&0xFFFFF)|lowWord(x) != 0 {
					return x + x
				}
				if xsb == 0 {
					return x
				}
				return -1.0
			}
			if x > oThreshold {
				return math.Inf(1)
			}
		}
		if xsb != 0 {
			if x+tiny < 0.0 {
				return tiny - 1.0
			}
		}
	}
	if hx > 0x3FD62E42 {
		if hx < 0x3FF0A2B2 {
			if xsb == 0 {
				hi = x - ln2Hi
				lo = ln2Lo
				k = 1
			} else {
				hi = x + ln2Hi
				lo = -ln2Lo
				k = -1
			}
		} else {
			if xsb == 0 {
				k = int32(invln2*x + 0.5)
			} else {
				k = int32(invln2*x - 0.5)
			}
			t = float64(k)
			hi = x - t*ln2Hi
			lo = t * ln2Lo
		}
		x = hi - lo
		c = (hi - x) - lo
	} else if hx < 0x3C900000 {
		t = huge + x
		return x - (t - (huge + x))
	} else {
		k = 0
	}
	hfx = 0.5 * x
	hxs = x * hfx
	r1 = 1.0 + hxs*(Q1+hxs*(Q2+hxs*(Q3+hxs*(Q4+hxs*Q5))))
	t = 3.0 - r1*hfx
	e = hxs * ((r1 - t) / (6.0 - x*t))
	if k == 0 {
		return x - (x*e - hxs)
	}
	twopk = fromWords(uint32(0x3FF00000+int32(uint32(k)<<20)), 0)
	e = x*(e-c) - c
	e -= hxs
	if k == -1 {
		return 0.5*(x-e) - 0.5
	}
	if k == 1 {
		if x < -0.25 {
			return -2.0 * (e - (x + 0.5))
		}
		return 1.0 + 2.0*(x-e)
	}
	if k <= -2 || k > 56 {
		y = 1.0 - (e - x)
		if k == 1024 {
			y = y * 2.0 * 8.98846567431158e+307
		} else {
			y = y * twopk
		}
		return y - 1.0
	}
	if k < 20 {
		t = fromWords(uint32(0x3FF00000-(0x200000>>k)), 0)
		y = t - (e - x)
		y = y * twopk
	} else {
		t = fromWords(uint32((0x3FF-k)<<20), 0)
		y = x - (e + t)
		y += 1.0
		y = y * twopk
	}
	return y
}

// Cbrt is Math.cbrt.
func Cbrt(x float64) float64 {
	const (
		B1 = 715094163
		B2 = 696219795
		P0 = 1.87595182427177009643
		P1 = -1.88497979543377169875
		P2 = 1.621429720105354466140
		P3 = -0.758397934778766047437
		P4 = 0.145996192886612446982
	)
	var t float64
	hx := uint32(highWord(x))
	low := lowWord(x)
	sign := hx & 0x80000000
	hx ^= sign
	if hx >= 0x7FF00000 {
		return x + x
	}
	if hx < 0x00100000 {
		if hx|low == 0 {
			return x
		}
		t = fromWords(0x43500000, 0)
		t *= x
		high := uint32(highWord(t))
		t = fromWords(sign|((high&0x7FFFFFFF)/3+B2), 0)
	} else {
		t = fromWords(sign|(hx/3+B1), 0)
	}
	r := (t * t) * (t / x)
	t = t * ((P0 + r*(P1+r*P2)) + ((r*r)*r)*(P3+r*P4))
	bits := math.Float64bits(t)
	bits = (bits + 0x80000000) & 0xFFFFFFFFC0000000
	t = math.Float64frombits(bits)
	s := t * t
	r = x / s
	w := t + t
	r = (r - t) / (w + r)
	t = t + t*r
	return t
}

// Cosh is Math.cosh.
func Cosh(x float64) float64 {
	const kcoshOverflow = 710.4758600739439
	ix := highWord(x) & 0x7FFFFFFF
	if ix < 0x3FD62E43 {
		t := Expm1(math.Abs(x))
		w := 1.0 + t
		if ix < 0x3C800000 {
			return w
		}
		return 1.0 + (t*t)/(w+w)
	}
	if ix < 0x40360000 {
		t := Exp(math.Abs(x))
		return 0.5*t + 0.5/t
	}
	if ix < 0x40862E42 {
		return 0.5 * Exp(math.Abs(x))
	}
	if math.Abs(x) <= kcoshOverflow {
		w := Exp(0.5 * math.Abs(x))
		t := 0.5 * w
		return t * w
	}
	if ix >= 0x7FF00000 {
		return x * x
	}
	return math.Inf(1)
}

// Sinh is Math.sinh.
func Sinh(x float64) float64 {
	const (
		ksinhOverflow = 710.4758600739439
		twoM28        = 3.725290298461914e-9
		logMaxD       = 709.7822265625
		shuge         = 1.0e307
	)
	h := 0.5
	if x < 0 {
		h = -0.5
	}
	ax := math.Abs(x)
	if ax < 22 {
		if ax < twoM28 {
			return x
		}
		t := Expm1(ax)
		if ax < 1 {
			return h * (2*t - t*t/(t+1))
		}
		return h * (t + t/(t+1))
	}
	if ax < logMaxD {
		return h * Exp(ax)
	}
	if ax <= ksinhOverflow {
		w := Exp(0.5 * ax)
		t := h * w
		return t * w
	}
	return x * shuge
}

// Tanh is Math.tanh.
func Tanh(x float64) float64 {
	const tiny = 1.0e-300
	var z float64
	jx := highWord(x)
	ix := jx & 0x7FFFFFFF
	if ix >= 0x7FF00000 {
		if jx >= 0 {
			return 1.0/x + 1.0
		}
		return 1.0/x - 1.0
	}
	if ix < 0x40360000 {
		if ix < 0x3E300000 {
			if 1e300+x > 1.0 {
				return x
			}
		}
		if ix >= 0x3FF00000 {
			t := Expm1(2.0 * math.Abs(x))
			z = 1.0 - 2.0/(t+2.0)
		} else {
			t := Expm1(-2.0 * math.Abs(x))
			z = -t / (t + 2.0)
		}
	} else {
		z = 1.0 - tiny
	}
	if jx >= 0 {
		return z
	}
	return -z
}
