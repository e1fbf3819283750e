/**
 * Email domains anyone can sign up to. A contact on one of them belongs to no company: matching companies by
 * such a domain would put every Gmail user in one "company".
 *
 * @since 0.1.0
 */

// Global providers and the ones common in Mexico and Latin America.
const domains = new Set([
  "gmail.com", "googlemail.com", "outlook.com", "outlook.es", "hotmail.com", "hotmail.es", "hotmail.com.mx", "live.com",
  "live.com.mx", "msn.com", "yahoo.com", "yahoo.com.mx", "yahoo.es", "ymail.com", "icloud.com", "me.com", "mac.com",
  "aol.com", "protonmail.com", "proton.me", "pm.me", "gmx.com", "gmx.net", "mail.com", "zoho.com", "yandex.com",
  "prodigy.net.mx", "terra.com.mx", "tutanota.com", "fastmail.com", "hey.com", "qq.com", "163.com"
])

/**
 * Whether `domain` (lower case) is a free-mail domain.
 *
 * @since 0.1.0 @category predicates
 */
export const isFreeMail = (domain: string): boolean => domains.has(domain)
