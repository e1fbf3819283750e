export { default } from "../../tsup.config.ts"
