import { createTheme, type CSSVariablesResolver } from '@mantine/core';

/** System fonts only: the console loads nothing from outside the gateway. Darker primary shades keep text contrast at WCAG AA. */
export const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: 8,
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' },
});

/** Colours the console uses in the light variant (badges, alerts, the active page link). */
const LIGHT_VARIANT_COLORS = ['indigo', 'blue', 'red', 'green', 'yellow', 'orange', 'gray'];

/**
 * Text at a 4.5:1 contrast at least (WCAG AA): dimmed text (descriptions, secondary lines) and field
 * errors in darker shades; the text of light-variant components (alerts, badges), which Mantine draws
 * in the colour's own shade on its tint, in black.
 */
export const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    ...Object.fromEntries(
      LIGHT_VARIANT_COLORS.map((color) => [`--mantine-color-${color}-light-color`, 'var(--mantine-color-black)']),
    ),
  },
  dark: {},
});
