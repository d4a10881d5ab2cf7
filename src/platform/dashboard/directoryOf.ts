import { ApiError } from '../../contract/errors.js';
import type { PlatformContext } from '../context.js';
import type { PartnerDirectory } from './directory.js';

/** The instance's partner directory (absent only in rigs built without the dashboard). */
export function directoryOf(platform: PlatformContext): PartnerDirectory {
  if (!platform.partners) throw new ApiError('UNKNOWN_ERROR', 'the dashboard is not available on this instance');
  return platform.partners;
}
