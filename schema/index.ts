import './scalars.ts';
import './errors.ts';
import './node.ts';
import './account.ts';
import './run.ts';
import './tools.ts';
import './wallet.ts';
import './payments.ts';
import './leads.ts';
import './catalog.ts';
import './webhooks.ts';
import './identity.ts';
import './console.ts';
import { builder } from './builder.ts';
import { guardSubscriptions } from './subscription-access.ts';

export const schema = guardSubscriptions(builder.toSchema({ sortSchema: false }));
