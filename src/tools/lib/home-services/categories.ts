import { HOME_SERVICE_CATEGORIES } from '../../../../db/tables/home-services.ts';
import { closestMatches, quotedAlternatives } from './similarity.ts';

/** "Air Duct Cleaning", "air_duct_cleaning" → "air-duct-cleaning"; a listed slug is returned unchanged. */
export function categorySlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Why `slug` is not a category, with the closest slugs as suggestions. */
export function unknownCategoryMessage(slug: string): string {
  const close = closestMatches(slug, HOME_SERVICE_CATEGORIES);
  const head = `"${slug}" is not one of the ${HOME_SERVICE_CATEGORIES.length} category slugs`;
  return close.length > 0
    ? `${head}; did you mean ${quotedAlternatives(close)}?`
    : `${head} (the list is in docs/tools.md, e.g. "plumbing", "hvac", "roofing")`;
}
