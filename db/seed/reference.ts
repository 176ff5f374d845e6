/** Reference data the generator draws from: real places, names, industries and technologies. */

export interface City {
  city: string;
  state: string;
  /** Full country name, as people-search filters use it. */
  country: string;
  countryCode: string;
  lat: number;
  lng: number;
  /** First postal code of the city (US) or a postal prefix. */
  zip: string;
  /** Phone area code (US/CA) or national prefix. */
  area: string;
}

const us = (city: string, state: string, lat: number, lng: number, zip: string, area: string): City => ({
  city, state, country: 'United States', countryCode: 'US', lat, lng, zip, area,
});

export const US_CITIES: City[] = [
  us('Denver', 'CO', 39.7392, -104.9903, '80202', '303'),
  us('Austin', 'TX', 30.2672, -97.7431, '78701', '512'),
  us('Seattle', 'WA', 47.6062, -122.3321, '98101', '206'),
  us('Boston', 'MA', 42.3601, -71.0589, '02108', '617'),
  us('Chicago', 'IL', 41.8781, -87.6298, '60601', '312'),
  us('Miami', 'FL', 25.7617, -80.1918, '33101', '305'),
  us('Phoenix', 'AZ', 33.4484, -112.074, '85001', '602'),
  us('Portland', 'OR', 45.5152, -122.6784, '97201', '503'),
  us('Nashville', 'TN', 36.1627, -86.7816, '37201', '615'),
  us('San Diego', 'CA', 32.7157, -117.1611, '92101', '619'),
  us('Atlanta', 'GA', 33.749, -84.388, '30301', '404'),
  us('Minneapolis', 'MN', 44.9778, -93.265, '55401', '612'),
  us('New York', 'NY', 40.7128, -74.006, '10001', '212'),
  us('San Francisco', 'CA', 37.7749, -122.4194, '94102', '415'),
  us('Los Angeles', 'CA', 34.0522, -118.2437, '90001', '213'),
  us('Dallas', 'TX', 32.7767, -96.797, '75201', '214'),
  us('Houston', 'TX', 29.7604, -95.3698, '77002', '713'),
  us('Philadelphia', 'PA', 39.9526, -75.1652, '19102', '215'),
  us('Charlotte', 'NC', 35.2271, -80.8431, '28202', '704'),
  us('Salt Lake City', 'UT', 40.7608, -111.891, '84101', '801'),
  us('Columbus', 'OH', 39.9612, -82.9988, '43215', '614'),
  us('Kansas City', 'MO', 39.0997, -94.5786, '64105', '816'),
  us('Raleigh', 'NC', 35.7796, -78.6382, '27601', '919'),
  us('Tampa', 'FL', 27.9506, -82.4572, '33602', '813'),
];

export const WORLD_CITIES: City[] = [
  { city: 'London', state: 'England', country: 'United Kingdom', countryCode: 'GB', lat: 51.5074, lng: -0.1278, zip: 'EC1A', area: '20' },
  { city: 'Manchester', state: 'England', country: 'United Kingdom', countryCode: 'GB', lat: 53.4808, lng: -2.2426, zip: 'M1', area: '161' },
  { city: 'Toronto', state: 'Ontario', country: 'Canada', countryCode: 'CA', lat: 43.6532, lng: -79.3832, zip: 'M5H', area: '416' },
  { city: 'Vancouver', state: 'British Columbia', country: 'Canada', countryCode: 'CA', lat: 49.2827, lng: -123.1207, zip: 'V6B', area: '604' },
  { city: 'Berlin', state: 'Berlin', country: 'Germany', countryCode: 'DE', lat: 52.52, lng: 13.405, zip: '10115', area: '30' },
  { city: 'Paris', state: 'Île-de-France', country: 'France', countryCode: 'FR', lat: 48.8566, lng: 2.3522, zip: '75001', area: '1' },
  { city: 'Amsterdam', state: 'North Holland', country: 'Netherlands', countryCode: 'NL', lat: 52.3676, lng: 4.9041, zip: '1011', area: '20' },
  { city: 'Sydney', state: 'New South Wales', country: 'Australia', countryCode: 'AU', lat: -33.8688, lng: 151.2093, zip: '2000', area: '2' },
  { city: 'Dubai', state: 'Dubai', country: 'United Arab Emirates', countryCode: 'AE', lat: 25.2048, lng: 55.2708, zip: '00000', area: '4' },
  { city: 'Singapore', state: 'Singapore', country: 'Singapore', countryCode: 'SG', lat: 1.3521, lng: 103.8198, zip: '018956', area: '6' },
];

export const EUROPEAN_CITIES: (City & { currency: string })[] = [
  ['Paris', 'France', 'FR', 48.8566, 2.3522, 'EUR'], ['Barcelona', 'Spain', 'ES', 41.3874, 2.1686, 'EUR'],
  ['Madrid', 'Spain', 'ES', 40.4168, -3.7038, 'EUR'], ['Lisbon', 'Portugal', 'PT', 38.7223, -9.1393, 'EUR'],
  ['Porto', 'Portugal', 'PT', 41.1579, -8.6291, 'EUR'], ['Rome', 'Italy', 'IT', 41.9028, 12.4964, 'EUR'],
  ['Florence', 'Italy', 'IT', 43.7696, 11.2558, 'EUR'], ['Amsterdam', 'Netherlands', 'NL', 52.3676, 4.9041, 'EUR'],
  ['Berlin', 'Germany', 'DE', 52.52, 13.405, 'EUR'], ['Munich', 'Germany', 'DE', 48.1351, 11.582, 'EUR'],
  ['Vienna', 'Austria', 'AT', 48.2082, 16.3738, 'EUR'], ['Dublin', 'Ireland', 'IE', 53.3498, -6.2603, 'EUR'],
  ['Athens', 'Greece', 'GR', 37.9838, 23.7275, 'EUR'], ['Prague', 'Czechia', 'CZ', 50.0755, 14.4378, 'CZK'],
  ['Budapest', 'Hungary', 'HU', 47.4979, 19.0402, 'HUF'], ['Copenhagen', 'Denmark', 'DK', 55.6761, 12.5683, 'DKK'],
  ['London', 'United Kingdom', 'GB', 51.5074, -0.1278, 'GBP'], ['Edinburgh', 'United Kingdom', 'GB', 55.9533, -3.1883, 'GBP'],
].map(([city, country, countryCode, lat, lng, currency]) => ({
  city: city as string, state: '', country: country as string, countryCode: countryCode as string,
  lat: lat as number, lng: lng as number, zip: '', area: '', currency: currency as string,
}));

export const FIRST_NAMES = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara',
  'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Christopher', 'Karen', 'Charles', 'Lisa', 'Daniel', 'Nancy',
  'Matthew', 'Betty', 'Anthony', 'Sandra', 'Mark', 'Margaret', 'Donald', 'Ashley', 'Steven', 'Kimberly', 'Andrew', 'Emily',
  'Paul', 'Donna', 'Joshua', 'Michelle', 'Kenneth', 'Carol', 'Kevin', 'Amanda', 'Brian', 'Melissa', 'George', 'Deborah',
  'Timothy', 'Stephanie', 'Ronald', 'Rebecca', 'Jason', 'Sharon', 'Edward', 'Laura', 'Jeffrey', 'Cynthia', 'Ryan', 'Dorothy',
  'Jacob', 'Amy', 'Gary', 'Kathleen', 'Nicholas', 'Angela', 'Eric', 'Shirley', 'Jonathan', 'Emma', 'Stephen', 'Brenda',
  'Larry', 'Pamela', 'Justin', 'Nicole', 'Scott', 'Anna', 'Brandon', 'Samantha', 'Benjamin', 'Katherine', 'Samuel', 'Christine',
  'Gregory', 'Debra', 'Alexander', 'Rachel', 'Patrick', 'Carolyn', 'Frank', 'Janet', 'Raymond', 'Maria', 'Jack', 'Olivia',
  'Dennis', 'Heather', 'Jerry', 'Helen', 'Tyler', 'Catherine', 'Aaron', 'Diane', 'Jose', 'Julie', 'Adam', 'Victoria',
  'Nathan', 'Joyce', 'Henry', 'Lauren', 'Zachary', 'Kelly', 'Douglas', 'Christina', 'Peter', 'Ruth', 'Kyle', 'Joan',
  'Noah', 'Virginia', 'Ethan', 'Judith', 'Jeremy', 'Evelyn', 'Christian', 'Hannah', 'Walter', 'Andrea', 'Keith', 'Megan',
  'Austin', 'Cheryl', 'Roger', 'Jacqueline', 'Terry', 'Madison', 'Sean', 'Sophia', 'Gerald', 'Abigail', 'Carl', 'Teresa',
  'Dylan', 'Isabella', 'Harold', 'Sara', 'Jordan', 'Janice', 'Jesse', 'Martha', 'Bryan', 'Gloria', 'Lawrence', 'Kathryn',
  'Arthur', 'Ann', 'Gabriel', 'Charlotte', 'Bruce', 'Judy', 'Logan', 'Amber', 'Billy', 'Julia', 'Joe', 'Grace',
  'Priya', 'Wei', 'Mohammed', 'Aisha', 'Hiroshi', 'Yuki', 'Carlos', 'Sofia', 'Luca', 'Chloe', 'Mateo', 'Ana',
];

export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez',
  'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez', 'Thompson', 'White',
  'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson', 'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott',
  'Torres', 'Nguyen', 'Hill', 'Flores', 'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell',
  'Carter', 'Roberts', 'Gomez', 'Phillips', 'Evans', 'Turner', 'Diaz', 'Parker', 'Cruz', 'Edwards', 'Collins', 'Reyes',
  'Stewart', 'Morris', 'Morales', 'Murphy', 'Cook', 'Rogers', 'Gutierrez', 'Ortiz', 'Morgan', 'Cooper', 'Peterson', 'Bailey',
  'Reed', 'Kelly', 'Howard', 'Ramos', 'Kim', 'Cox', 'Ward', 'Richardson', 'Watson', 'Brooks', 'Chavez', 'Wood',
  'James', 'Bennett', 'Gray', 'Mendoza', 'Ruiz', 'Hughes', 'Price', 'Alvarez', 'Castillo', 'Sanders', 'Patel', 'Myers',
  'Long', 'Ross', 'Foster', 'Jimenez', 'Powell', 'Jenkins', 'Perry', 'Russell', 'Sullivan', 'Bell', 'Coleman', 'Butler',
  'Henderson', 'Barnes', 'Gonzales', 'Fisher', 'Vasquez', 'Simmons', 'Romero', 'Jordan', 'Patterson', 'Alexander', 'Hamilton', 'Graham',
  'Reynolds', 'Griffin', 'Wallace', 'Moreno', 'West', 'Cole', 'Hayes', 'Bryant', 'Herrera', 'Gibson', 'Ellis', 'Tran',
  'Medina', 'Aguilar', 'Stevens', 'Murray', 'Ford', 'Castro', 'Marshall', 'Owens', 'Harrison', 'Fernandez', 'McDonald', 'Woods',
  'Washington', 'Kennedy', 'Wells', 'Vargas', 'Henry', 'Chen', 'Freeman', 'Webb', 'Tucker', 'Guzman', 'Burns', 'Crawford',
  'Olson', 'Simpson', 'Porter', 'Hunter', 'Gordon', 'Mendez', 'Silva', 'Shaw', 'Snyder', 'Mason', 'Dixon', 'Munoz',
  'Shah', 'Wang', 'Li', 'Zhang', 'Tanaka', 'Sato', 'Khan', 'Ali', 'Rossi', 'Müller', 'Dubois', 'Kowalski',
];

/** At least 100 real technology names that company websites and stores run. */
export const TECHNOLOGIES = [
  'Salesforce', 'HubSpot', 'Marketo', 'Pardot', 'Mailchimp', 'Klaviyo', 'Intercom', 'Zendesk', 'Freshdesk', 'Drift',
  'Google Analytics', 'Google Tag Manager', 'Google Ads', 'Meta Pixel', 'LinkedIn Insight Tag', 'Hotjar', 'Mixpanel', 'Amplitude',
  'Segment', 'Heap', 'FullStory', 'Optimizely', 'VWO', 'Adobe Analytics', 'Adobe Experience Manager', 'WordPress', 'Drupal',
  'Joomla', 'Webflow', 'Wix', 'Squarespace', 'Shopify', 'Shopify Plus', 'WooCommerce', 'Magento', 'BigCommerce', 'PrestaShop',
  'Salesforce Commerce Cloud', 'Stripe', 'PayPal', 'Braintree', 'Adyen', 'Square', 'Klarna', 'Afterpay', 'Affirm',
  'Amazon Web Services', 'Google Cloud', 'Microsoft Azure', 'Cloudflare', 'Fastly', 'Akamai', 'Vercel', 'Netlify', 'Heroku',
  'DigitalOcean', 'Nginx', 'Apache', 'Microsoft IIS', 'React', 'Vue.js', 'Angular', 'Next.js', 'Nuxt.js', 'Svelte', 'jQuery',
  'Bootstrap', 'Tailwind CSS', 'Node.js', 'Ruby on Rails', 'Django', 'Laravel', 'PHP', 'ASP.NET', 'Java', 'Python', 'Go',
  'PostgreSQL', 'MySQL', 'MongoDB', 'Redis', 'Elasticsearch', 'Snowflake', 'Databricks', 'Tableau', 'Looker', 'Power BI',
  'Slack', 'Microsoft Teams', 'Zoom', 'Google Workspace', 'Microsoft 365', 'Okta', 'Auth0', 'Twilio', 'SendGrid', 'Mailgun',
  'Zapier', 'Jira', 'Confluence', 'Asana', 'Trello', 'Notion', 'Monday.com', 'GitHub', 'GitLab', 'Datadog', 'New Relic',
  'Sentry', 'PagerDuty', 'Workday', 'BambooHR', 'Greenhouse', 'Lever', 'Gusto', 'NetSuite', 'QuickBooks', 'Xero', 'SAP',
  'Oracle', 'ServiceNow', 'DocuSign', 'Calendly', 'Gong', 'Outreach', 'Salesloft', 'ZoomInfo', 'Apollo.io', 'Yotpo',
  'Judge.me', 'Gorgias', 'ReCharge', 'Attentive', 'Postscript', 'Privy', 'Smile.io', 'LoyaltyLion', 'Bold Commerce', 'Vimeo',
  'YouTube', 'Wistia', 'Typeform', 'SurveyMonkey', 'Unbounce', 'Instapage', 'OneTrust', 'Cookiebot', 'reCAPTCHA', 'Algolia',
];

export interface Industry {
  name: string;
  keywords: string[];
  /** Typical revenue per employee, USD. */
  revenuePerEmployee: number;
  nameWords: string[];
}

export const INDUSTRIES: Industry[] = [
  { name: 'Computer Software', keywords: ['saas', 'software', 'cloud', 'b2b', 'platform', 'api', 'automation', 'analytics'], revenuePerEmployee: 250_000, nameWords: ['Soft', 'Cloud', 'Logic', 'Stack', 'Labs', 'Systems'] },
  { name: 'Information Technology & Services', keywords: ['it services', 'consulting', 'managed services', 'cybersecurity', 'cloud', 'devops'], revenuePerEmployee: 180_000, nameWords: ['Tech', 'IT', 'Solutions', 'Networks', 'Data'] },
  { name: 'Marketing & Advertising', keywords: ['digital marketing', 'seo', 'advertising', 'branding', 'content marketing', 'social media'], revenuePerEmployee: 150_000, nameWords: ['Media', 'Creative', 'Digital', 'Agency', 'Brands'] },
  { name: 'Financial Services', keywords: ['fintech', 'payments', 'lending', 'wealth management', 'banking', 'insurance'], revenuePerEmployee: 400_000, nameWords: ['Capital', 'Financial', 'Partners', 'Wealth', 'Pay'] },
  { name: 'Hospital & Health Care', keywords: ['healthcare', 'telehealth', 'clinics', 'patient care', 'medical devices', 'digital health'], revenuePerEmployee: 120_000, nameWords: ['Health', 'Care', 'Medical', 'Clinic', 'Wellness'] },
  { name: 'Real Estate', keywords: ['real estate', 'property management', 'commercial real estate', 'brokerage', 'proptech'], revenuePerEmployee: 200_000, nameWords: ['Realty', 'Properties', 'Estates', 'Homes'] },
  { name: 'Retail', keywords: ['retail', 'ecommerce', 'consumer goods', 'omnichannel', 'd2c'], revenuePerEmployee: 160_000, nameWords: ['Goods', 'Market', 'Store', 'Outfitters', 'Supply'] },
  { name: 'Construction', keywords: ['construction', 'general contracting', 'civil engineering', 'renovation', 'infrastructure'], revenuePerEmployee: 220_000, nameWords: ['Builders', 'Construction', 'Contracting', 'Structures'] },
  { name: 'Education Management', keywords: ['edtech', 'e-learning', 'online courses', 'training', 'higher education'], revenuePerEmployee: 90_000, nameWords: ['Learning', 'Academy', 'Education', 'Edu'] },
  { name: 'Logistics & Supply Chain', keywords: ['logistics', 'freight', 'supply chain', 'warehousing', 'last mile', 'shipping'], revenuePerEmployee: 210_000, nameWords: ['Logistics', 'Freight', 'Transport', 'Shipping'] },
  { name: 'Manufacturing', keywords: ['manufacturing', 'industrial', 'machining', 'fabrication', 'automation', 'oem'], revenuePerEmployee: 260_000, nameWords: ['Industries', 'Manufacturing', 'Works', 'Fabrication'] },
  { name: 'Hospitality', keywords: ['hospitality', 'hotels', 'restaurants', 'travel', 'events'], revenuePerEmployee: 80_000, nameWords: ['Hospitality', 'Hotels', 'Kitchen', 'Travel'] },
  { name: 'Legal Services', keywords: ['law firm', 'litigation', 'corporate law', 'legal tech', 'compliance'], revenuePerEmployee: 300_000, nameWords: ['Law', 'Legal', 'Counsel', 'Partners'] },
  { name: 'Human Resources', keywords: ['recruiting', 'staffing', 'hr tech', 'payroll', 'talent acquisition'], revenuePerEmployee: 140_000, nameWords: ['Talent', 'Staffing', 'People', 'Recruit'] },
  { name: 'Renewables & Environment', keywords: ['solar', 'clean energy', 'sustainability', 'ev charging', 'wind energy'], revenuePerEmployee: 280_000, nameWords: ['Energy', 'Solar', 'Green', 'Power'] },
  { name: 'Insurance', keywords: ['insurance', 'insurtech', 'underwriting', 'claims', 'risk management'], revenuePerEmployee: 350_000, nameWords: ['Insurance', 'Assurance', 'Mutual', 'Risk'] },
  { name: 'Biotechnology', keywords: ['biotech', 'life sciences', 'drug discovery', 'genomics', 'clinical trials'], revenuePerEmployee: 320_000, nameWords: ['Bio', 'Therapeutics', 'Genomics', 'Pharma'] },
  { name: 'Automotive', keywords: ['automotive', 'dealership', 'auto parts', 'electric vehicles', 'fleet'], revenuePerEmployee: 300_000, nameWords: ['Motors', 'Auto', 'Automotive', 'Drive'] },
  { name: 'Food & Beverages', keywords: ['food', 'beverages', 'cpg', 'restaurants', 'catering', 'organic'], revenuePerEmployee: 170_000, nameWords: ['Foods', 'Kitchen', 'Brewing', 'Provisions'] },
  { name: 'Telecommunications', keywords: ['telecom', 'wireless', 'broadband', 'voip', '5g'], revenuePerEmployee: 380_000, nameWords: ['Telecom', 'Wireless', 'Connect', 'Networks'] },
];

export const COMPANY_PREFIXES = [
  'Acme', 'Apex', 'Atlas', 'Aurora', 'Beacon', 'Blue', 'Bright', 'Cedar', 'Summit', 'Crest', 'Delta', 'Echo', 'Ever', 'Falcon',
  'Frontier', 'Granite', 'Harbor', 'Horizon', 'Iron', 'Juniper', 'Keystone', 'Lumen', 'Maple', 'Meridian', 'Nimbus', 'North',
  'Nova', 'Oak', 'Orbit', 'Pacific', 'Peak', 'Pine', 'Pinnacle', 'Pioneer', 'Prime', 'Quantum', 'Red', 'River', 'Rock', 'Sage',
  'Sierra', 'Silver', 'Sky', 'Spring', 'Star', 'Sterling', 'Stone', 'Sun', 'Terra', 'True', 'Union', 'Vector', 'Vista', 'West',
];

export const SIZE_BANDS: [band: string, min: number, max: number, weight: number][] = [
  ['1-10', 1, 10, 30], ['11-50', 11, 50, 28], ['51-200', 51, 200, 20], ['201-500', 201, 500, 10],
  ['501-1000', 501, 1000, 5], ['1001-5000', 1001, 5000, 4], ['5001-10000', 5001, 10000, 2], ['10001+', 10001, 60000, 1],
];

/** Department → its individual-contributor role; titles are built from it and the seniority. */
export const DEPARTMENT_ROLES: Record<string, { label: string; role: string }> = {
  engineering: { label: 'Engineering', role: 'Software Engineer' },
  sales: { label: 'Sales', role: 'Account Executive' },
  marketing: { label: 'Marketing', role: 'Marketing Specialist' },
  finance: { label: 'Finance', role: 'Financial Analyst' },
  human_resources: { label: 'Human Resources', role: 'Recruiter' },
  operations: { label: 'Operations', role: 'Operations Analyst' },
  information_technology: { label: 'IT', role: 'Systems Administrator' },
  legal: { label: 'Legal', role: 'Legal Counsel' },
  product: { label: 'Product', role: 'Product Manager' },
  customer_success: { label: 'Customer Success', role: 'Customer Success Manager' },
  design: { label: 'Design', role: 'Product Designer' },
};

/** Chief officers other than the CEO (each company's first person is its CEO, owner or founder). */
export const C_SUITE: [title: string, department: string][] = [
  ['Chief Technology Officer', 'engineering'], ['CFO', 'finance'], ['COO', 'operations'],
  ['Chief Marketing Officer', 'marketing'], ['Chief Revenue Officer', 'sales'], ['CIO', 'information_technology'],
  ['Chief People Officer', 'human_resources'], ['Chief Product Officer', 'product'],
];

/** Seniority with its share of the workforce. */
export const SENIORITY_WEIGHTS: [string, number][] = [
  ['owner', 2], ['founder', 2], ['c_suite', 4], ['partner', 1], ['vp', 5], ['head', 4], ['director', 10],
  ['manager', 18], ['senior', 22], ['entry', 29], ['intern', 3],
];

export const STORE_PLATFORM_INFO: Record<string, { weight: number; tiers: string[]; kind: 'hosted' | 'open_source' | 'enterprise' }> = {
  shopify: { weight: 40, tiers: ['basic', 'shopify', 'advanced', 'plus'], kind: 'hosted' },
  woocommerce: { weight: 22, tiers: ['self_hosted'], kind: 'open_source' },
  bigcommerce: { weight: 6, tiers: ['standard', 'plus', 'pro', 'enterprise'], kind: 'hosted' },
  wix: { weight: 9, tiers: ['core', 'business', 'business_elite'], kind: 'hosted' },
  squarespace: { weight: 8, tiers: ['business', 'commerce_basic', 'commerce_advanced'], kind: 'hosted' },
  magento: { weight: 5, tiers: ['open_source', 'adobe_commerce'], kind: 'open_source' },
  prestashop: { weight: 4, tiers: ['self_hosted'], kind: 'open_source' },
  opencart: { weight: 3, tiers: ['self_hosted'], kind: 'open_source' },
  shopware: { weight: 2, tiers: ['community', 'rise', 'evolve', 'beyond'], kind: 'enterprise' },
  salesforce_commerce_cloud: { weight: 1, tiers: ['b2c', 'b2b'], kind: 'enterprise' },
};

export const STORE_CATEGORIES = [
  'Apparel', 'Beauty & Cosmetics', 'Home & Garden', 'Electronics', 'Pet Supplies', 'Jewelry', 'Sports & Outdoors', 'Toys & Games',
  'Food & Beverage', 'Health & Wellness', 'Books', 'Art & Crafts', 'Baby & Kids', 'Furniture', 'Footwear', 'Accessories',
];

export const STORE_TECHNOLOGIES = [
  'Klaviyo', 'Google Analytics', 'Google Tag Manager', 'Meta Pixel', 'Stripe', 'PayPal', 'Klarna', 'Afterpay', 'Affirm', 'Yotpo',
  'Judge.me', 'Gorgias', 'ReCharge', 'Attentive', 'Postscript', 'Privy', 'Smile.io', 'LoyaltyLion', 'Hotjar', 'Zendesk',
  'Mailchimp', 'Cloudflare', 'Algolia', 'OneTrust', 'Cookiebot', 'TikTok Pixel', 'Pinterest Tag', 'Intercom',
];

export const SHOPIFY_APPS = [
  'Klaviyo: Email Marketing & SMS', 'Judge.me Product Reviews', 'Yotpo Product Reviews', 'ReCharge Subscriptions', 'Gorgias Helpdesk',
  'Privy Pop Ups', 'Smile: Loyalty Program', 'Shopify Inbox', 'Shop Pay Installments', 'PageFly Page Builder', 'Loox Photo Reviews',
  'Omnisend Email Marketing', 'Route Package Protection', 'Zipify Pages', 'Bold Subscriptions', 'Vitals', 'Tidio Live Chat',
];

export const STREET_NAMES = [
  'Main St', 'Broadway', 'Oak Ave', 'Pine St', '1st Ave', 'Market St', 'Elm St', 'Park Ave', 'Lake Dr', 'Hill Rd', 'Maple Ave',
  'Cedar Ln', 'Washington Blvd', 'Lincoln Way', 'Sunset Blvd', 'River Rd', 'Highland Ave', 'Church St', 'Spring St', 'Center St',
];

export const AGENT_SPECIALTIES: [code: string, name: string][] = [
  ['1001', "Buyer's agent"], ['1002', 'Listing agent'], ['1003', 'Relocation'], ['1004', 'Short sale'], ['1005', 'Foreclosure'],
  ['1006', 'First-time buyers'], ['1007', 'Luxury homes'], ['1008', 'Condos'], ['1009', 'New construction'], ['1010', 'Investment properties'],
  ['1011', 'Land'], ['1012', 'Vacation homes'], ['1013', 'Military & veterans'], ['1014', 'Seniors'], ['1015', 'Rentals'],
  ['1016', 'Commercial'], ['1017', 'Farm & ranch'], ['1018', 'Waterfront'], ['1019', 'Golf communities'], ['1020', 'Historic homes'],
  ['1021', 'Green homes'], ['1022', 'Multi-family'], ['1023', 'Townhomes'], ['1024', 'Mobile homes'], ['1025', 'Property management'],
  ['1026', 'Staging'], ['1027', '1031 exchange'], ['1028', 'Probate'], ['1029', 'Divorce sales'], ['1030', 'Lease to own'],
  ['1031', 'Equestrian'], ['1032', 'Ski property'], ['1033', 'Urban lofts'], ['1034', 'Retirement communities'], ['1035', 'Second homes'],
  ['1036', 'Bank-owned'], ['1037', 'Fixer-uppers'], ['1038', 'Pre-construction'], ['1039', 'Co-ops'], ['1040', 'Accessible homes'],
  ['1041', 'Tiny homes'], ['1042', 'Estate sales'],
];

export const LANGUAGES = [
  'English', 'Spanish', 'Chinese', 'Tagalog', 'Vietnamese', 'Arabic', 'French', 'Korean', 'Russian', 'German', 'Haitian Creole',
  'Hindi', 'Portuguese', 'Italian', 'Polish', 'Urdu', 'Japanese', 'Persian', 'Gujarati', 'Telugu', 'Bengali', 'Thai', 'Greek',
  'Hebrew', 'Punjabi', 'Armenian', 'Tamil', 'Ukrainian', 'Dutch', 'Turkish', 'Somali', 'Amharic', 'Cantonese', 'Mandarin',
  'Romanian', 'Hungarian', 'Swahili', 'Serbian', 'Croatian', 'Czech', 'Farsi', 'Sign Language',
];

export const BUSINESS_CATEGORIES = [
  'Restaurants & Food', 'Retail', 'Service Businesses', 'Manufacturing', 'Online & Technology', 'Health Care & Fitness',
  'Automotive & Boat', 'Building & Construction', 'Wholesale & Distribution', 'Transportation & Storage', 'Beauty & Personal Care',
  'Education & Children', 'Franchise Resales', 'Agriculture', 'Travel',
];

export const COMMERCIAL_TYPES = ['office', 'retail', 'industrial', 'multifamily', 'land', 'hospitality', 'mixed_use', 'healthcare'];

export const RENTAL_AMENITIES = [
  'Wifi', 'Kitchen', 'Washer', 'Dryer', 'Air conditioning', 'Heating', 'Dedicated workspace', 'TV', 'Hair dryer', 'Iron',
  'Pool', 'Hot tub', 'Free parking', 'EV charger', 'Crib', 'Gym', 'Breakfast', 'Balcony', 'Elevator', 'Pets allowed',
];

export const OFFENSES: Record<string, string[]> = {
  sex_offender_registry: ['Sexual assault', 'Indecent exposure', 'Failure to register'],
  department_of_corrections: ['Burglary', 'Robbery', 'Aggravated assault', 'Drug trafficking', 'Grand theft', 'Fraud'],
  arrest: ['DUI', 'Disorderly conduct', 'Possession of a controlled substance', 'Shoplifting', 'Trespassing', 'Resisting arrest'],
  court: ['Petty theft', 'Reckless driving', 'Vandalism', 'Simple assault', 'Driving with a suspended license', 'Forgery'],
};

export const DISPOSITIONS = ['Convicted', 'Dismissed', 'Pending', 'Deferred adjudication', 'Acquitted', 'Plea agreement'];

/** US states and territories by abbreviation. */
export const US_STATES: Record<string, string> = {
  AL: 'Alabama', AK: 'Alaska', AZ: 'Arizona', AR: 'Arkansas', CA: 'California', CO: 'Colorado',
  CT: 'Connecticut', DE: 'Delaware', DC: 'District of Columbia', FL: 'Florida', GA: 'Georgia',
  HI: 'Hawaii', ID: 'Idaho', IL: 'Illinois', IN: 'Indiana', IA: 'Iowa', KS: 'Kansas', KY: 'Kentucky',
  LA: 'Louisiana', ME: 'Maine', MD: 'Maryland', MA: 'Massachusetts', MI: 'Michigan', MN: 'Minnesota',
  MS: 'Mississippi', MO: 'Missouri', MT: 'Montana', NE: 'Nebraska', NV: 'Nevada', NH: 'New Hampshire',
  NJ: 'New Jersey', NM: 'New Mexico', NY: 'New York', NC: 'North Carolina', ND: 'North Dakota',
  OH: 'Ohio', OK: 'Oklahoma', OR: 'Oregon', PA: 'Pennsylvania', RI: 'Rhode Island',
  SC: 'South Carolina', SD: 'South Dakota', TN: 'Tennessee', TX: 'Texas', UT: 'Utah', VT: 'Vermont',
  VA: 'Virginia', WA: 'Washington', WV: 'West Virginia', WI: 'Wisconsin', WY: 'Wyoming',
  PR: 'Puerto Rico',
};
