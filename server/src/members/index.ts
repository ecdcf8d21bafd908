// What other features may use of members: following an invitation (the dashboard's sign-in).
export { type Acceptance, acceptInvitation, type Invitee, presentMember } from './service.ts';
export { pendingInvitations } from './store.ts';
