// FormatList and bestFitFormat (gorender, see build.mjs).

// FormatList is one calendar's formats of a locale (skeleton -> pattern, as
// CLDR lists them, ~750) in the form the format matchers read: the fields
// a skeleton asks for depend on the skeleton alone, are the same in every
// locale and are made once per skeleton (skeletonFields); a format is
// parsed (pattern, range patterns) only when a matcher picks it. FormatJS
// parsed all of a locale's formats when the locale was first used: objects
// that most pages never read, ~10 MB per locale on goja.
class FormatList {
	constructor(patterns, intervals) {
		this.patterns = patterns;
		this.intervals = intervals;
		this.skeletons = tableKeys(patterns);
		this.parsed = new Map();
		this.rows = null;
		this.winners = null;
	}
	get length() {
		return this.skeletons.length;
	}
	// fields is the skeleton fields of format i ({year: "numeric", ...}).
	fields(i) {
		return skeletonFields(this.skeletons[i]);
	}
	// format is format i parsed, as FormatJS's list held it.
	format(i) {
		let f = this.parsed.get(i);
		if (!f) {
			const skeleton = this.skeletons[i];
			const intervals = this.intervals;
			f = parseDateTimeSkeleton(skeleton, this.patterns[skeleton], () => intervals[skeleton] || findIntervalFormat(skeleton, intervals), intervals.intervalFormatFallback);
			this.parsed.set(i, f);
		}
		return f;
	}
}

// tableKeys is Object.keys(o) of a table of locale data (src/index.js,
// localeTable), which hands its key list over without being asked about each
// key (as Object.keys asks a proxy), or of any other object.
const TABLE_KEYS = Symbol.for("gorender.intl.tableKeys");
function tableKeys(o) {
	const keys = o[TABLE_KEYS];
	return keys === void 0 ? Object.keys(o) : keys;
}

// skeletonRow is a skeleton's fields as bestFitFormat scores them, one
// character per field: the index in rowValues of the value of each of
// DATE_TIME_PROPS, then whether the hour is a 12-hour one (a string: an
// array per skeleton was ~1 MB on goja).
const skeletonRows = new Map();
const rowValues = [void 0];
function skeletonRow(skeleton) {
	let row = skeletonRows.get(skeleton);
	if (row === void 0) {
		const fields = Object.create(null);
		replaceDateTimeTokens(skeleton, fields);
		row = "";
		for (const p of DATE_TIME_PROPS) {
			let code = rowValues.indexOf(fields[p]);
			if (code < 0) code = rowValues.push(fields[p]) - 1;
			row += String.fromCharCode(code);
		}
		row += fields.hour12 ? "1" : "0";
		skeletonRows.set(skeleton, row);
	}
	return row;
}

// bestFitFormat is bestFitFormatMatcherScore's winner among formats (a
// FormatList), the first of the best: remembered per options.
const FIELD_WIDTHS = ["2-digit", "numeric", "narrow", "short", "long"];
function bestFitFormat(options, formats) {
	if (!formats.rows) {
		formats.rows = formats.skeletons.map(skeletonRow);
		formats.winners = new Map();
	}
	const rows = formats.rows;
	const wanted = DATE_TIME_PROPS.map((p) => options[p]);
	const key = (options.hour12 ? "12" : "") + "|" + wanted.map((v) => v === void 0 ? "" : String(v)).join("|");
	let best = formats.winners.get(key);
	if (best !== void 0) return formats.format(best);
	const hasHour = options.hour !== void 0;
	const hour12 = wanted.length;
	const wantHour12 = options.hour12 ? "1" : "0";
	let bestScore = -Infinity;
	best = 0;
	for (let i = 0; i < rows.length; i++) {
		const row = rows[i];
		let score = 0;
		if (hasHour && row[hour12] !== wantHour12) score -= options.hour12 ? 120 : 20;
		for (let j = 0; j < wanted.length; j++) {
			const o = wanted[j];
			const f = rowValues[row.charCodeAt(j)];
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
			best = i;
		}
	}
	formats.winners.set(key, best);
	return formats.format(best);
}
