/**
 * The `crm` schema's migrations.
 *
 * @since 0.1.0
 */
import crm from "./migrations/0001_crm.js"
import crmSurface from "./migrations/0002_crm_surface.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "crm",
  dependsOn: ["core"],
  migrations: {
    "0001_crm": crm,
    "0002_crm_surface": crmSurface
  }
} as const
