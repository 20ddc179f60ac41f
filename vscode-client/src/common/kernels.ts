/**
 * Kernel names in a document, found by a scan of the text. Enough to tell which kernel the cursor is in
 * for "Benchmark kernel"; the server does the real (tolerant) parse.
 */
export interface KernelRef {
  name: string;
  line: number; // 0-based line of the kernel's name
}

const KERNEL_HEAD = /\b(?:__kernel|kernel)\b(?:\s+__attribute__\s*\(\(.*?\)\))*\s+void\s+([A-Za-z_]\w*)\s*\(/gs;
const COMMENT = /\/\/[^\n]*|\/\*[\s\S]*?\*\//g;

export function kernelsIn(text: string): KernelRef[] {
  // Blank comments (keeping newlines) so a commented-out kernel is not offered.
  const code = text.replace(COMMENT, (m) => m.replace(/[^\n]/g, " "));
  const found: KernelRef[] = [];
  for (const m of code.matchAll(KERNEL_HEAD)) {
    const name = m[1];
    if (name === undefined || m.index === undefined) continue;
    const at = m.index + m[0].lastIndexOf(name);
    found.push({ name, line: code.slice(0, at).split("\n").length - 1 });
  }
  return found;
}

/**
 * The kernel the cursor is in: the last one that starts at or above `line` (0-based); above the first
 * kernel (on its directive, say) the first one.
 */
export function kernelAt(text: string, line: number): KernelRef | undefined {
  const all = kernelsIn(text);
  return all.filter((k) => k.line <= line).pop() ?? all[0];
}
