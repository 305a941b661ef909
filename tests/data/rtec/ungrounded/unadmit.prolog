% inputs: meet/part(A,B) (ids A, B), ban(P)
initiatedAt(near(A,B)=true, T) :- happensAt(meet(A,B), T).
terminatedAt(near(A,B)=true, T) :- happensAt(part(A,B), T).
holdsFor(far(A,B)=true, I) :- holdsFor(near(A,B)=true, I1), complement_all([I1], I).
initiatedAt(met(A,B)=true, T) :- happensAt(start(near(A,B)=true), T).

dynamicDomain(id(_)).
dynamicDomain(banned(_)).
grounding(meet(A,B)) :- id(A), id(B).
grounding(part(A,B)) :- id(A), id(B).
grounding(ban(P)) :- banned(P).
% near(a,b) is not admitted once b is banned (at 50): in one window over the stream, never
grounding(near(A,B)=true) :- id(A), id(B), A @< B, \+ banned(B).
grounding(far(A,B)=true) :- id(A), id(B), A @< B.
grounding(met(A,B)=true) :- id(A), id(B).
