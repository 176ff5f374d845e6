import { boolean, index, integer, pgTable, real, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { catalogId, textList } from './columns.ts';

/** The 167 category slugs of the home-services scraper, as the spec lists them. */
export const HOME_SERVICE_CATEGORIES = [
  'air-duct-cleaning', 'animal-removal', 'appliance-repair', 'appliance-sales', 'appraisals', 'architects',
  'asbestos-removal', 'awnings', 'basement-waterproofing', 'basketball-goals', 'bathtub-refinishing',
  'biohazard-remediation', 'blind-cleaning', 'buffing-and-polishing', 'cabinet-makers',
  'cabinet-refinishing', 'carpet', 'carpet-cleaning', 'ceiling-fans', 'central-vacuum-cleaners',
  'ceramic-tile', 'childproofing', 'chimney-caps', 'chimney-repair', 'chimney-sweep', 'cleaning', 'closets',
  'computer-repair', 'concrete-driveways', 'concrete-leveling', 'concrete-repair',
  'concrete-stamped-decorative', 'contractor', 'countertops', 'deck-maintenance', 'decks-and-porches',
  'dock-building-repair', 'doors', 'drain-cleaning', 'drain-pipe-installation', 'drapery-cleaning',
  'driveway-gates', 'driveways', 'dryer-vent-cleaning', 'drywall', 'dumpster-rental', 'earthquake-retrofit',
  'egress', 'electrical', 'energy-audit', 'epoxy-flooring', 'excavating', 'exterior-painting', 'fencing',
  'fireplaces', 'firewood', 'floor-cleaning', 'flooring', 'foundation-repair', 'fountains',
  'furniture-refinishing', 'garage-builders', 'garage-doors', 'garbage-collection', 'gas-grill-repair',
  'gas-leak-repair', 'gas-logs', 'generator-installers', 'glass-and-mirrors', 'glass-block',
  'gutter-cleaning', 'gutter-repair-replacement', 'handyman-service', 'hardwood-flooring', 'hauling',
  'heating-oil-companies', 'holiday-decorating', 'home-and-garage-organization', 'home-automation',
  'home-builders', 'home-inspection', 'home-phone-service', 'home-security-systems', 'home-staging',
  'home-theater-systems', 'home-warranty-companies', 'house-cleaning', 'hurricane-film',
  'hurricane-shutters', 'hvac', 'insulation', 'interior-design', 'interior-painting',
  'kitchen-and-bath-remodeling', 'land-surveying', 'landscaping', 'landscaping-hardscaping-and-pavers',
  'landscaping-lighting', 'lawn-and-yard-work', 'lawn-fertilization-and-treatment', 'lawn-irrigation',
  'lawn-mower-repair', 'lead-testing-and-removal', 'leaf-removal', 'leather-and-vinyl-repair', 'lighting',
  'locksmiths', 'mailbox-repair', 'marble-and-granite', 'masonry', 'metal-fabrication-and-restoration',
  'mold-testing-and-remediation', 'moving', 'mulch-and-topsoil', 'oriental-rug-cleaning', 'outdoor-kitchens',
  'patios', 'pest-control', 'pet-fencing', 'phone-repair', 'piano-moving', 'plant-nurseries',
  'plaster-plaster-repair', 'playground-equipment', 'plumbing', 'pool-and-spa-service', 'pressure-washing',
  'property-appraiser', 'radon-testing', 'real-estate-agents', 'remodeling-basements',
  'remodeling-modular-and-mobile-home', 'roof-cleaning', 'roof-ice-and-snow-removal', 'roofing',
  'roto-tilling', 'satellite-tv-service', 'screen-repair', 'septic-tank', 'sewer-cleaning', 'siding',
  'skylights', 'small-appliance-repair', 'snow-removal', 'solar-panels', 'stone-and-gravel',
  'structural-engineering', 'stucco', 'sunroom-and-patio-remodeling', 'swimming-pools', 'tree-service',
  'tv-antenna', 'upholstering', 'upholstery-cleaning', 'wallpaper-removal', 'wallpapering',
  'water-and-smoke-damage', 'water-heaters', 'water-softeners', 'welding', 'wells-and-pumps',
  'window-cleaning', 'window-tinting', 'window-treatments', 'windows', 'woodworking', 'wrought-iron',
] as const;
export type HomeServiceCategory = (typeof HOME_SERVICE_CATEGORIES)[number];

/** Home-service professionals; `profile_url` is the natural key; `category` is one of the 167 slugs. */
export const homeServiceProTable = pgTable(
  'home_service_pro',
  {
    id: catalogId(),
    profileUrl: text('profile_url').notNull(),
    name: text('name').notNull(),
    category: text('category').notNull(),
    /** Customer grade A to F. */
    grade: text('grade'),
    phone: text('phone'),
    email: text('email'),
    website: text('website'),
    street: text('street'),
    city: text('city').notNull(),
    state: text('state').notNull(),
    zip: text('zip').notNull(),
    /** Ordered lines such as "Monday: 8 AM–6 PM". */
    hours: textList('hours'),
    licensed: boolean('licensed').notNull().default(false),
    insured: boolean('insured').notNull().default(false),
    yearsInBusiness: integer('years_in_business'),
    /** ZIP codes served. */
    serviceZips: textList('service_zips'),
    rating: real('rating'),
    reviewCount: integer('review_count').notNull().default(0),
  },
  (t) => [
    uniqueIndex('home_service_pro_profile_key').on(t.profileUrl),
    index('home_service_pro_category_idx').on(t.category, t.id),
    index('home_service_pro_zips_idx').using('gin', t.serviceZips),
  ],
);
export type HomeServicePro = typeof homeServiceProTable.$inferSelect;
