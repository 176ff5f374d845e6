import { useState, type FormEvent } from 'react';
import {
  Alert,
  Button,
  Code,
  CopyButton,
  Group,
  NativeSelect,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import type { Role } from '../gql/graphql.ts';
import { Ago, Loading, QueryError, TableScroll, useConfirm, UserErrors } from '../components.tsx';
import { PageTitle } from '../Shell.tsx';
import { useSession } from '../lib/session-context.tsx';
import { ROLE_WORDS, word } from '../lib/format.ts';

const MembersQuery = graphql(`
  query ConsoleMembers {
    viewer {
      id
      members(first: 100) {
        nodes {
          id
          role
          createdAt
          user {
            id
            email
            name
          }
        }
      }
      invitations(first: 100) {
        nodes {
          id
          email
          role
          createdAt
          expiresAt
        }
      }
    }
  }
`);

const Invite = graphql(`
  mutation ConsoleInvite($input: InviteMemberInput!) {
    inviteMember(input: $input) {
      invitation {
        id
        email
      }
      link
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const ChangeRole = graphql(`
  mutation ConsoleChangeRole($input: ChangeMemberRoleInput!) {
    changeMemberRole(input: $input) {
      membership {
        id
        role
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const Remove = graphql(`
  mutation ConsoleRemoveMember($id: ID!) {
    removeMember(id: $id) {
      removedMembershipId
      revokedKeyCount
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const RevokeInvitation = graphql(`
  mutation ConsoleRevokeInvitation($id: ID!) {
    revokeInvitation(id: $id) {
      revokedInvitationId
      userErrors {
        code
        field
        message
      }
    }
  }
`);

/** What a removal did to the member's API keys. */
const keysRevoked = (n: number | null) =>
  !n ? '' : n === 1 ? '; the API key they created was revoked' : `; the ${n} API keys they created were revoked`;
const roleLabel = (role: string) => word(ROLE_WORDS, role);

/**
 * The link an invitation just made, to share another way than the mail: shown once, as a key's secret is
 * (the gateway keeps only its hash); a later copy means sending the invitation again.
 */
function InvitationLink({ email, link }: { email: string; link: string }) {
  return (
    <Stack gap={4}>
      <Text size="sm">Or share this link with {email} yourself; it is shown only now and works once, for a week.</Text>
      <Group gap="xs" wrap="nowrap" align="flex-start">
        <Code block style={{ flex: 1, minWidth: 0, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
          {link}
        </Code>
        <CopyButton value={link}>
          {({ copied, copy }) => (
            <Button size="xs" variant="default" onClick={copy}>
              {copied ? 'Copied' : 'Copy the invitation link'}
            </Button>
          )}
        </CopyButton>
      </Group>
    </Stack>
  );
}

export default function Members() {
  const { session } = useSession();
  const [{ data, error }, refetch] = useQuery({ query: MembersQuery, requestPolicy: 'cache-and-network' });
  const [invited, invite] = useMutation(Invite);
  const [changed, change] = useMutation(ChangeRole);
  const [removed, remove] = useMutation(Remove);
  const [revoked, revoke] = useMutation(RevokeInvitation);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('MEMBER');
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const [confirmation, ask] = useConfirm();
  const [resent, setResent] = useState<string | null>(null);
  // Sends an invitation again: inviting the address anew replaces its pending invitation (the old link stops).
  const resend = async (invitation: { email: string; role: Role }) => {
    setResent(null);
    const result = await invite({ input: { email: invitation.email, role: invitation.role } });
    if (result.data?.inviteMember.invitation) {
      setResent(invitation.email);
      reload();
    }
  };
  // The sole owner's own row offers neither a role change nor removal: the account keeps an owner.
  const owners = data?.viewer.members.nodes.filter((m) => m.role === 'OWNER').length ?? 0;
  const soleOwner = (m: { role: Role; user: { id: string } }) =>
    m.role === 'OWNER' && owners === 1 && m.user.id === session.user.id;
  // What the user may give, and whose role they may change, is the server's to say (the session).
  const assignable = session.assignableRoles.map((r) => r.toUpperCase() as Role);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await invite({ input: { email, role } });
    if (result.data?.inviteMember.invitation) {
      setEmail('');
      reload();
    }
  };
  const errors = [
    ...(invited.data?.inviteMember.userErrors ?? []),
    ...(changed.data?.changeMemberRole.userErrors ?? []),
    ...(removed.data?.removeMember.userErrors ?? []),
    ...(revoked.data?.revokeInvitation.userErrors ?? []),
  ];
  return (
    <Stack>
      <PageTitle title="Members">
        Owners manage everything, billing included; admins manage keys, webhooks and members; members use tools, runs
        and data. The API keys a member created act with their current role, and stop working when they leave the
        account.
      </PageTitle>
      <form onSubmit={submit} aria-label="Invite a member">
        <Group align="flex-end">
          <TextInput
            label="Email to invite"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
          />
          <NativeSelect
            label="Role"
            value={role}
            onChange={(e) => setRole(e.currentTarget.value as Role)}
            data={assignable.map((r) => ({ value: r, label: roleLabel(r) }))}
          />
          <Button type="submit" loading={invited.fetching}>
            Send invitation
          </Button>
        </Group>
      </form>
      {removed.data?.removeMember.removedMembershipId && (
        <Alert color="green" role="status">
          Member removed{keysRevoked(removed.data.removeMember.revokedKeyCount)}.
        </Alert>
      )}
      {confirmation}
      {invited.data?.inviteMember.invitation && (
        <Alert color="green" role="status">
          <Stack gap="xs">
            <Text size="sm">
              {resent
                ? `The invitation of ${resent} was sent again; the earlier link no longer works.`
                : `Invitation sent to ${invited.data.inviteMember.invitation.email}.`}
            </Text>
            {invited.data.inviteMember.link && (
              <InvitationLink
                email={invited.data.inviteMember.invitation.email}
                link={invited.data.inviteMember.link}
              />
            )}
          </Stack>
        </Alert>
      )}
      <UserErrors errors={errors} />
      {error ? (
        <QueryError error={error} />
      ) : !data ? (
        <Loading />
      ) : (
        <>
          <Title order={3}>Members</Title>
          <TableScroll label="Members" minWidth={720}>
            <Table
              aria-label="Members"
              data={{
                head: ['Email', 'Name', 'Role', 'Since', 'Remove'],
                body: data.viewer.members.nodes.map((m) => [
                  m.user.email,
                  m.user.name ?? '—',
                  <NativeSelect
                    key="role"
                    aria-label={`Role of ${m.user.email}`}
                    value={m.role}
                    disabled={!assignable.includes(m.role) || soleOwner(m)}
                    description={soleOwner(m) ? 'The only owner' : undefined}
                    onChange={async (e) => {
                      await change({ input: { membershipId: m.id, role: e.currentTarget.value as Role } });
                      reload();
                    }}
                    data={(assignable.includes(m.role) ? assignable : [m.role]).map((r) => ({
                      value: r,
                      label: roleLabel(r),
                    }))}
                  />,
                  <Ago key="since" iso={m.createdAt} />,
                  soleOwner(m) ? (
                    <Text key="remove" size="sm">
                      Make another member owner first
                    </Text>
                  ) : (
                    <Button
                      key="remove"
                      size="xs"
                      color="red"
                      variant="outline"
                      aria-label={`Remove ${m.user.email}`}
                      onClick={async () => {
                        const yes = await ask({
                          title: `Remove ${m.user.email}?`,
                          body: 'Their sessions end and the API keys they created stop working.',
                          confirm: 'Remove',
                          color: 'red',
                        });
                        if (!yes) return;
                        await remove({ id: m.id });
                        reload();
                      }}
                    >
                      Remove
                    </Button>
                  ),
                ]),
              }}
            />
          </TableScroll>
          <Title order={3}>Pending invitations</Title>
          {data.viewer.invitations.nodes.length === 0 ? (
            <Text size="sm">No invitation is waiting. Invite someone above; their link is valid for a week.</Text>
          ) : (
            <TableScroll label="Pending invitations" minWidth={720}>
              <Table
                aria-label="Pending invitations"
                data={{
                  head: ['Email', 'Role', 'Sent', 'Expires', 'Actions'],
                  body: data.viewer.invitations.nodes.map((i) => [
                    i.email,
                    roleLabel(i.role),
                    <Ago key="sent" iso={i.createdAt} />,
                    <Ago key="expires" iso={i.expiresAt} />,
                    <Group key="actions" gap="xs">
                      <Button
                        size="xs"
                        variant="light"
                        aria-label={`Send the invitation of ${i.email} again`}
                        loading={invited.fetching && invited.operation?.variables.input.email === i.email}
                        onClick={() => void resend(i)}
                      >
                        Send again
                      </Button>
                      <Button
                        key="revoke"
                        size="xs"
                        color="red"
                        variant="outline"
                        aria-label={`Revoke the invitation of ${i.email}`}
                        onClick={async () => {
                          const yes = await ask({
                            title: `Revoke the invitation of ${i.email}?`,
                            body: 'Its link will stop working.',
                            confirm: 'Revoke',
                            color: 'red',
                          });
                          if (!yes) return;
                          await revoke({ id: i.id });
                          reload();
                        }}
                      >
                        Revoke
                      </Button>
                    </Group>,
                  ]),
                }}
              />
            </TableScroll>
          )}
        </>
      )}
    </Stack>
  );
}
