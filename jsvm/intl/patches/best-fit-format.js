// bestFitFormat is bestFitFormatMatcherScore's winner among formats, the
// first of the best (gorender, see build.mjs): remembered per options, and
// scored over arrays of each format's fields, made once per formats list.
const bestFitFormats = new WeakMap();
const FIELD_WIDTHS = ["2-digit", "numeric", "narrow", "short", "long"];
function bestFitFormat(options, formats) {
	let m = bestFitFormats.get(formats);
	if (!m) {
		m = {
			winners: new Map(),
			fields: formats.map((f) => DATE_TIME_PROPS.map((p) => f[p])),
			hour12: formats.map((f) => !!f.hour12)
		};
		bestFitFormats.set(formats, m);
	}
	const wanted = DATE_TIME_PROPS.map((p) => options[p]);
	const key = (options.hour12 ? "12" : "") + "|" + wanted.map((v) => v === void 0 ? "" : String(v)).join("|");
	let best = m.winners.get(key);
	if (best) return best;
	const hasHour = options.hour !== void 0;
	let bestScore = -Infinity;
	best = formats[0];
	for (let i = 0; i < formats.length; i++) {
		const fields = m.fields[i];
		let score = 0;
		if (hasHour) {
			if (options.hour12 && !m.hour12[i]) score -= 120;
			else if (!options.hour12 && m.hour12[i]) score -= 20;
		}
		for (let j = 0; j < wanted.length; j++) {
			const o = wanted[j];
			const f = fields[j];
			if (o === void 0) {
				if (f !== void 0) score -= 20;
			} else if (f === void 0) score -= 120;
			else if (o !== f) {
				if ((o === "numeric" || o === "2-digit") !== (f === "numeric" || f === "2-digit")) score -= 15;
				else {
					const delta = Math.max(-2, Math.min(FIELD_WIDTHS.indexOf(f) - FIELD_WIDTHS.indexOf(o), 2));
					if (delta === 2) score -= 6;
					else if (delta === 1) score -= 3;
					else if (delta === -1) score -= 6;
					else if (delta === -2) score -= 8;
				}
			}
		}
		if (score > bestScore) {
			bestScore = score;
			best = formats[i];
		}
	}
	m.winners.set(key, best);
	return best;
}
