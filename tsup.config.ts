import { defineConfig, type Options } from "tsup"

// One thin shared build: every public module is an entry so subpath imports work after packing.
export const shared: Options = {
  entry: ["src/*.ts"],
  format: ["esm"],
  target: "es2022",
  platform: "node",
  // Declarations without project-reference bookkeeping: each package is built on its own.
  dts: { compilerOptions: { composite: false, incremental: false, declarationMap: false } },
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
  outDir: "dist"
}

export default defineConfig(shared)
