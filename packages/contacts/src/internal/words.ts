/** "1 credit", "2,000 credits": a count with the right noun, for the sentences quotes and unlocks answer. */
export const plural = (n: number, one: string, many: string): string => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`
