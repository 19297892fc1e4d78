	// gorender: a format's range patterns are parsed when a range is
	// formatted with it, not for each of a locale's ~750 formats when the
	// locale is first used (seconds per locale on goja).
	let ranges = null;
	const computeRanges = () => {
		if (ranges) return ranges;
		ranges = [Object.create(null), Object.create(null)];
		const [rp, rp12] = ranges;
		if (typeof rangePatterns === "function") rangePatterns = rangePatterns();
		if (rangePatterns) for (const k in rangePatterns) {
			const key = skeletonTokenToTable2(k);
			const rawPattern = rangePatterns[k];
			const intervalResult = Object.assign(Object.create(null), { patternParts: [] });
			const [pattern, pattern12] = processDateTimePattern(rawPattern, intervalResult);
			rp[key] = {
				...intervalResult,
				patternParts: splitRangePattern(pattern)
			};
			rp12[key] = {
				...intervalResult,
				patternParts: splitRangePattern(pattern12)
			};
		}
		if (intervalFormatFallback) {
			const patternParts = splitFallbackRangePattern(intervalFormatFallback);
			rp.default = { patternParts };
			rp12.default = { patternParts };
		}
		const yearFields = ["{relatedYear}", "{yearName}"].filter((field) => result.pattern.includes(field));
		if (yearFields.length) for (const patterns of ranges) for (const field of Object.keys(patterns)) {
			if (field === "default") continue;
			const range = patterns[field].patternParts.map((part) => part.pattern).join("");
			if (yearFields.some((yearField) => !range.includes(yearField))) delete patterns[field];
		}
		return ranges;
	};
	lazyField(result, "rangePatterns", computeRanges, 0);
	lazyField(result, "rangePatterns12", computeRanges, 1);
	Object.assign(result, skeletonFields(skeleton));
	// Likewise the pattern: matching options to a format reads only the
	// skeleton's fields.
	let patterns = null;
	const computePatterns = () => {
		if (patterns) return patterns;
		const fields = Object.create(null);
		patterns = processDateTimePattern(rawPattern, fields);
		if (!patternFields.has(result)) patternFields.set(result, fields);
		return patterns;
	};
	lazyField(result, "pattern", computePatterns, 0);
	lazyField(result, "pattern12", computePatterns, 1);
	return result;
