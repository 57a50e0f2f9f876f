// Progress lines on stderr, stamped with the seconds since the bench started (the tables go to stdout).
export const t0 = Date.now();

export const log = (message) => process.stderr.write(`[bench +${((Date.now() - t0) / 1000).toFixed(1)}s] ${message}\n`);
