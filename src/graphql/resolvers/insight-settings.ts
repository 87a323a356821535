/**
 * A workspace's insight detection settings on the graph: `Workspace.insightSettings` and the
 * mutation `setInsightSettings` call the handlers of REST's `…/insight-settings` routes. GraphQL
 * has no map input, so the overrides come as a list of `{ name, value }`: a name given twice is
 * refused (each repeat named at `/overrides/{i}/name`), then the list becomes REST's body and is
 * checked by REST's body schema (at most one override per setting, names of at most 64
 * characters), so both transports refuse the same requests with the same codes and fields.
 */
import { fieldErrors, MAX_LISTED_FIELD_ERRORS, type FieldError } from '../../errors.ts';
import type { MutationResolvers, SetInsightSettingsInput } from '../../generated/graphql.ts';
import { setWorkspaceSettings, settingsBodySchema, type SettingsBody } from '../../insights/workspace-settings.ts';
import { restBodyCheck } from '../rest-body-check.ts';

const checkBody = restBodyCheck(settingsBodySchema);

/** The repeats of a name already given earlier in the list, each named by its place. */
function repeatedNames(overrides: SetInsightSettingsInput['overrides']): FieldError[] {
  const first = new Map<string, number>();
  const repeats: FieldError[] = [];
  overrides.forEach(({ name }, i) => {
    const at = first.get(name);
    if (at === undefined) first.set(name, i);
    else if (repeats.length < MAX_LISTED_FIELD_ERRORS) {
      const field = `/overrides/${i}/name`;
      repeats.push({ field, detail: `${field} repeats ${JSON.stringify(name)}, given at /overrides/${at}/name` });
    }
  });
  return repeats;
}

/** The REST body of the input; throws REST's field errors when it breaks the body's schema. */
function settingsBody(input: SetInsightSettingsInput): SettingsBody {
  const repeats = repeatedNames(input.overrides);
  if (repeats.length > 0) throw fieldErrors(repeats);
  const body = { overrides: Object.fromEntries(input.overrides.map((o) => [o.name, o.value])) };
  checkBody(body);
  return body;
}

export const settingsMutations: Pick<MutationResolvers, 'setInsightSettings'> = {
  setInsightSettings: (_root, { input }, ctx) =>
    setWorkspaceSettings(ctx, input.workspaceId, settingsBody(input).overrides),
};
