	if (rangePatterns) for (const k in rangePatterns) {
		const key = skeletonTokenToTable2(k);
		const rawPattern = rangePatterns[k];
		const intervalResult = Object.assign(Object.create(null), { patternParts: [] });
		const [pattern, pattern12] = processDateTimePattern(rawPattern, intervalResult);
		result.rangePatterns[key] = {
			...intervalResult,
			patternParts: splitRangePattern(pattern)
		};
		result.rangePatterns12[key] = {
			...intervalResult,
			patternParts: splitRangePattern(pattern12)
		};
	}
	if (intervalFormatFallback) {
		const patternParts = splitFallbackRangePattern(intervalFormatFallback);
		result.rangePatterns.default = { patternParts };
		result.rangePatterns12.default = { patternParts };
	}
	replaceDateTimeTokens(skeleton, result);
	const fields = Object.create(null);
	const [pattern, pattern12] = processDateTimePattern(rawPattern, fields);
	patternFields.set(result, fields);
	result.pattern = pattern;
	result.pattern12 = pattern12;
	const yearFields = ["{relatedYear}", "{yearName}"].filter((field) => pattern.includes(field));
	if (yearFields.length) for (const patterns of [result.rangePatterns, result.rangePatterns12]) for (const field of Object.keys(patterns)) {
		if (field === "default") continue;
		const range = patterns[field].patternParts.map((part) => part.pattern).join("");
		if (yearFields.some((yearField) => !range.includes(yearField))) delete patterns[field];
	}
	return result;
