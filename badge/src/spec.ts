/**
 * What a badge says, apart from how it is drawn: this entry point (`@proctor/badge/spec`) loads no
 * renderer, so that a service can validate and describe badges before it draws one.
 */

export const BADGE_STYLES = ['flat', 'flat-square', 'plastic', 'for-the-badge', 'social'] as const;
export type BadgeStyle = (typeof BADGE_STYLES)[number];

/** The formats one description is drawn in. */
export const BADGE_FORMATS = ['svg', 'png', 'json'] as const;
export type BadgeFormat = (typeof BADGE_FORMATS)[number];

/** The Content-Type each format is served with. */
export const BADGE_CONTENT_TYPES: Record<BadgeFormat, string> = {
  svg: 'image/svg+xml; charset=utf-8',
  png: 'image/png',
  json: 'application/json; charset=utf-8',
};

/** What a badge says: the one description every format is drawn from. */
export interface BadgeSpec {
  label: string;
  message: string;
  /** A hex colour (`#4c1`, `4c1`) or a shields.io colour name (`brightgreen`, `red`, …). */
  color: string;
  labelColor?: string;
  style: BadgeStyle;
}

/** A shields.io endpoint badge (https://shields.io/badges/endpoint-badge). */
export interface EndpointBadge {
  schemaVersion: 1;
  label: string;
  message: string;
  color: string;
}
